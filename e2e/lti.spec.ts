// LTI 1.3 in Chromium (issue 35, docs/lti.md): a test LMS that follows the 1EdTech specs launches people
// into a Lab Console of this spec's own, which it restarts mid-post. Everything is read as a person
// reads it: the LMS's course and gradebook pages, and Lab Console's pages.
import { expect, test, type Browser, type BrowserContext, type Page } from "@playwright/test";
import type { ScorePost } from "../src/server/lti/testing/platform-state.ts";
import { ConsoleView } from "./pages/console-view.ts";
import { GradingPage } from "./pages/grading-page.ts";
import { HomePage } from "./pages/home-page.ts";
import { expectAccessible } from "./support/accessibility.ts";
import { LtiConsole } from "./support/lti-console.ts";

// linux-basics: the self-checks (~/hello.txt containing hello, 2 points; ~/notes, 1 point) give 3 of
// its 10 points; the rest gives the other 7.
const lab = { id: "linux-basics", title: "Linux basics", points: 10 };
const selfCheckedPart = "echo hello > ~/hello.txt && mkdir -p ~/notes";
const theRest =
  "touch ~/notes/secret.txt && chmod 600 ~/notes/secret.txt && wc -l < /etc/passwd > ~/passwd-lines.txt" +
  " && mkdir -p ~/bin && printf '#!/bin/bash\\necho hi\\n' > ~/bin/greet && chmod +x ~/bin/greet";
const course = { id: "cs101", title: "CS 101: Systems" };
const platformName = "Test LMS";

let lms: LtiConsole;
/** Each person's browser window, closed after each test. */
const windows: BrowserContext[] = [];

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  lms = await LtiConsole.create(lab.id);
  await lms.start();
});

test.afterEach(async () => {
  for (const window of windows.splice(0)) await window.close();
});

test.afterAll(async () => {
  await lms?.dispose();
});

async function newWindow(browser: Browser): Promise<Page> {
  const window = await browser.newContext();
  windows.push(window);
  return window.newPage();
}

/** A new browser window of one person, at their view of the LMS course. */
async function atCourse(browser: Browser, sub: string, name: string): Promise<Page> {
  const page = await newWindow(browser);
  await page.goto(lms.platform.coursePageUrl(sub, course.id));
  await expect(page.getByRole("heading", { name: course.title })).toBeVisible();
  await expect(page.getByText(`Signed in as ${name}`)).toBeVisible();
  return page;
}

/** The LMS's gradebook, read again until `expected` holds: the LMS page does not refresh itself. */
async function gradebookShows(page: Page, expected: (page: Page) => Promise<void>): Promise<void> {
  await expect(async () => {
    await page.goto(lms.platform.gradebookUrl(course.id));
    await expected(page);
  }).toPass({ timeout: 30_000 });
}

function gradebookCell(page: Page, student: string) {
  return page.getByRole("row", { name: new RegExp(`^${student}`) }).getByRole("cell");
}

const scoreGiven = (post: ScorePost) => (post.body as { scoreGiven?: number } | undefined)?.scoreGiven;
const timestampOf = (post: ScorePost) => (post.body as { timestamp?: string } | undefined)?.timestamp;

test("a learner launched from the course is graded; the score reaches the gradebook once, also across a restart mid-post", async ({
  browser,
}) => {
  test.setTimeout(180_000);
  const { platform } = lms;

  // Stella opens the lab's link in her course and lands on that lab in Lab Console, signed in.
  const student = await atCourse(browser, "u-stella", "Stella Student");
  await student.getByRole("link", { name: "Open Lab 1", exact: true }).click();
  const home = new HomePage(student);
  await expect(home.heading).toBeVisible();
  expect(student.url()).toBe(`${lms.url}/?lab=${lab.id}`);
  await expect(home.currentUser).toHaveText(/stella@example\.edu\s*Student/);
  await expect(home.catalog.getByRole("button", { name: /^Launch / })).toHaveCount(1);
  await expect(home.launchButton(lab.title)).toBeVisible();
  await expect(
    home.catalog.getByRole("link", { name: "Show the other 3 labs (not part of this course)" }),
  ).toBeVisible();

  // She launches it and does the self-checked tasks in the serial console.
  await home.launchButton(lab.title).click();
  const terminal = new ConsoleView(student);
  await terminal.run(selfCheckedPart);

  // Ines, the instructor, opens the same link and lands on the lab's grading page.
  const instructor = await atCourse(browser, "u-ines", "Ines Instructor");
  await instructor.getByRole("link", { name: "Open Lab 1", exact: true }).click();
  const grading = new GradingPage(instructor);
  await expect(grading.heading).toHaveText(`Grading: ${lab.title}`);
  expect(instructor.url()).toBe(`${lms.url}/grading/${lab.id}`);
  await expect(instructor.getByRole("radio", { name: "Every running session (1)" })).toBeChecked();
  await grading.startButton.click();
  await expect(instructor.getByText("1 of 1 session graded.")).toBeVisible();
  await expect(grading.rowFor("stella@example.edu").getByRole("cell").nth(1)).toHaveText(`3 / ${lab.points}`);

  // The LMS's gradebook: one column for the lab, Stella's score in it once, nobody else's.
  const gradebook = await newWindow(browser);
  await gradebookShows(gradebook, async (page) => {
    await expect(gradebookCell(page, "Stella Student")).toHaveText([`3 / ${lab.points}`], { timeout: 1_000 });
  });
  await expect(gradebook.getByRole("columnheader")).toHaveText(["Student", lab.title]);
  await expect(gradebook.getByRole("cell", { name: `3 / ${lab.points}` })).toHaveCount(1);
  await expect(gradebookCell(gradebook, "Otto")).toHaveText([""]);

  // Lab Console's LMS page says it was posted.
  await instructor.goto(`${lms.url}/lti`);
  const scores = instructor.getByRole("table", { name: "Grades sent to the LMS" });
  const firstScore = scores.getByRole("row").filter({ hasText: `3 / ${lab.points}` });
  await expect(firstScore.getByRole("rowheader")).toHaveText("stella@example.edu");
  await expect(firstScore).toContainText(lab.title);
  await expect(firstScore).toContainText(course.title);
  await expect(firstScore).toContainText("Grading run");
  await expect(firstScore).toContainText(/Posted\s*Posted /);

  // Stella finishes the lab; Ines grades again while the LMS keeps its answer to the score.
  await terminal.run(theRest);
  platform.quirks.holdScores = true;
  await instructor.goto(`${lms.url}/grading/${lab.id}`);
  await expect(grading.heading).toHaveText(`Grading: ${lab.title}`);
  await instructor
    .getByRole("button", { name: "Grade again the 1 session that lost points or could not be graded" })
    .click();
  await expect(instructor.getByText("1 of 1 session graded.")).toBeVisible();
  await expect(grading.rowFor("stella@example.edu").getByRole("cell").nth(1)).toHaveText(
    `${lab.points} / ${lab.points}`,
  );
  const fullMarks = () => platform.scorePosts().filter((post) => scoreGiven(post) === lab.points);
  await expect.poll(() => fullMarks().map((post) => post.status)).toEqual(["held"]);
  const gradedAt = timestampOf(fullMarks()[0]!);
  await instructor.goto(`${lms.url}/lti`);
  const secondScore = scores.getByRole("row").filter({ hasText: `${lab.points} / ${lab.points}` });
  await expect(secondScore).toContainText("Pending");

  // Lab Console stops while the post is on the wire, and starts again on the same data.
  await lms.stop();
  await expect.poll(() => fullMarks().map((post) => post.status)).toEqual(["closed"]);
  platform.quirks.holdScores = false;
  await lms.start();

  // The outbox sends the score again, with the same timestamp: still one column, one result.
  await gradebookShows(gradebook, async (page) => {
    await expect(gradebookCell(page, "Stella Student")).toHaveText([`${lab.points} / ${lab.points}`], {
      timeout: 1_000,
    });
  });
  await expect.poll(() => fullMarks().map((post) => post.status)).toEqual(["closed", 204]);
  expect(fullMarks().map(timestampOf)).toEqual([gradedAt, gradedAt]);
  await expect(gradebook.getByRole("columnheader")).toHaveText(["Student", lab.title]);
  await expect(gradebook.getByRole("cell", { name: `${lab.points} / ${lab.points}` })).toHaveCount(1);
  await expect(gradebookCell(gradebook, "Otto")).toHaveText([""]);
  expect(platform.lineItems(course.id)).toHaveLength(1);

  await instructor.reload();
  await expect(secondScore).toContainText(/Posted\s*In the gradebook\s*Posted /);
  await expect(instructor.getByRole("list", { name: "Grades by state" })).toHaveText(
    /Pending\s*0\s*Posted\s*2\s*Refused\s*0/,
  );
});

test("an instructor adds a lab to the course from Lab Console's catalog (deep linking)", async ({
  browser,
}) => {
  const lmsPage = await atCourse(browser, "u-ines", "Ines Instructor");
  await lmsPage.getByRole("button", { name: "Add content from Lab Console", exact: true }).click();

  await expect(
    lmsPage.getByRole("heading", { name: `Add labs to ${course.title} in ${platformName}` }),
  ).toBeVisible();
  const gitLab = lmsPage.getByLabel("Git workflow", { exact: true });
  await gitLab.check();
  await lmsPage
    .getByLabel("Also send each student's latest self-check to the gradebook", { exact: false })
    .check();
  await expect(lmsPage.getByText("1 lab chosen")).toBeVisible();
  await expectAccessible(lmsPage, "the deep-link picker with a lab chosen");
  await lmsPage.getByRole("button", { name: "Add to course" }).click();

  // Back in the LMS, which says what was added; the course lists it, with its own column.
  await expect(lmsPage.getByText("Added: Git workflow")).toBeVisible();
  await lmsPage.getByRole("link", { name: "Back to the course" }).click();
  await expect(lmsPage.getByRole("link", { name: "Open Git workflow", exact: true })).toBeVisible();
  await expect(lmsPage.getByRole("link", { name: "Open Lab 1", exact: true })).toBeVisible();
  await lmsPage.goto(lms.platform.gradebookUrl(course.id));
  await expect(lmsPage.getByRole("columnheader")).toHaveText(["Student", lab.title, "Git workflow"]);

  // The new link launches the lab it was made for.
  await lmsPage.goBack();
  await lmsPage.getByRole("link", { name: "Open Git workflow", exact: true }).click();
  await expect(lmsPage.getByRole("heading", { level: 1, name: "Grading: Git workflow" })).toBeVisible();
});

test("an instructor adds a lab inside the LMS's frame, which hands it to the course page (deep linking as Moodle and Canvas frame it)", async ({
  browser,
}) => {
  const screenLab = "Your VM's screen";
  const lmsPage = await atCourse(browser, "u-ines", "Ines Instructor");
  await lmsPage.getByRole("button", { name: "Add content from Lab Console in a frame" }).click();

  // The picker opens in the frame itself: no new window, no sign-in.
  const tool = lmsPage.frameLocator('iframe[title="Tool"]');
  await expect(
    tool.getByRole("heading", { name: `Add labs to ${course.title} in ${platformName}` }),
  ).toBeVisible();
  await tool.getByLabel(screenLab, { exact: true }).check();
  await expect(tool.getByText("1 lab chosen")).toBeVisible();
  await tool.getByRole("button", { name: "Add to course" }).click();

  // The LMS's return page, in the frame, hands the result to the course page around it, which says
  // what was added. Nothing needed a cookie of Lab Console's: the browser holds none.
  await expect(lmsPage.getByText(`Added: ${screenLab}`)).toBeVisible();
  await expect(lmsPage.locator('iframe[title="Tool"]')).toHaveCount(0);
  expect(lmsPage.context().pages()).toHaveLength(1);
  expect(await lmsPage.context().cookies(lms.url)).toEqual([]);
  await lmsPage.getByRole("link", { name: "Back to the course" }).click();
  await expect(lmsPage.getByRole("link", { name: `Open ${screenLab}`, exact: true })).toBeVisible();
  await lmsPage.goto(lms.platform.gradebookUrl(course.id));
  await expect(lmsPage.getByRole("columnheader")).toHaveText([
    "Student",
    lab.title,
    "Git workflow",
    screenLab,
  ]);
});

test("a launch in the LMS's frame offers a new window, which is signed in on the lab", async ({
  browser,
}) => {
  const lmsPage = await atCourse(browser, "u-otto", "Otto");
  await lmsPage.getByRole("link", { name: "Open Lab 1 in a frame" }).click();
  const tool = lmsPage.frameLocator('iframe[title="Tool"]');
  const openLink = tool.getByRole("link", { name: "Open Lab Console in a new window" });
  await expect(openLink).toBeVisible();

  const popupOpened = lmsPage.context().waitForEvent("page");
  await openLink.click();
  const popup = await popupOpened;
  const home = new HomePage(popup);
  await expect(home.heading).toBeVisible();
  expect(popup.url()).toBe(`${lms.url}/?lab=${lab.id}`);
  await expect(home.currentUser).toHaveText(/otto@example\.edu\s*Student/);
  await expect(home.launchButton(lab.title)).toBeVisible();
});

test("the LMS page is accessible", async ({ browser }) => {
  const lmsPage = await atCourse(browser, "u-ines", "Ines Instructor");
  await lmsPage.getByRole("link", { name: "Open Lab 1", exact: true }).click();
  await expect(lmsPage.getByRole("heading", { level: 1, name: /^Grading: / })).toBeVisible();
  await lmsPage.goto(`${lms.url}/lti`);
  await expect(lmsPage.getByRole("heading", { level: 1, name: "Learning management systems" })).toBeVisible();
  await expect(lmsPage.getByRole("table", { name: "Grades sent to the LMS" })).toBeVisible();
  await expectAccessible(lmsPage, "the LMS page with platforms, courses and grades");
});
