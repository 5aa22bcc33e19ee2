import { expect, test } from "./fixtures.ts";
import { HomePage } from "./pages/home-page.ts";
import { timelineStep } from "./pages/session-card.ts";
import { SessionPage } from "./pages/session-page.ts";
import { SignInPage } from "./pages/sign-in-page.ts";
import { translator } from "./support/catalog.ts";

test("the sign-in page opens with nothing in the browser's console, from the address and from /", async ({
  page,
}) => {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(error.message));
  const signIn = new SignInPage(page);
  await signIn.goto();
  await expect(signIn.heading).toBeVisible();
  // Nobody is signed in: the home page sends the browser on to sign-in.
  await page.goto("/");
  await expect(signIn.heading).toBeVisible();
  await expect(page).toHaveURL(/\/sign-in/);
  expect(problems).toEqual([]);
});

test("a student signs in, launches a lab, lands on it, reads its tasks, sees it reach Running and ends it", async ({
  page,
  lab,
}) => {
  const signIn = new SignInPage(page);
  await signIn.goto();
  await signIn.signIn("alice");

  const home = new HomePage(page);
  await expect(home.heading).toBeVisible();
  await expect(home.currentUser).toHaveText(/alice\s*Student/);
  await expect(home.mySessions).toContainText("No running sessions");

  // Launch goes to the session, where the VM boots and the console opens: no "Details" to find.
  await home.launchButton(lab.title).click();
  const session = new SessionPage(page);
  await expect(session.heading).toBeVisible();
  await expect(page).toHaveURL(/\/sessions\/[\w-]+$/);
  const card = session.card(lab.title);
  await expect(card).toBeVisible();
  // Every task from the start, not only the self-checks after "Check my work".
  const t = translator("en");
  expect(lab.checks.length).toBeGreaterThan(0);
  await expect(session.tasks.getByRole("listitem")).toHaveCount(lab.checks.length);
  for (const check of lab.checks) {
    const task = session.task(check.title);
    await expect(task).toContainText(t("labs.tasks.points", { count: check.points }));
    await expect(task).toContainText(t(check.selfCheck ? "labs.tasks.selfCheck" : "labs.tasks.gradedLater"));
  }
  await expect(timelineStep(card, "Running", t)).toHaveAttribute("data-state", "done");
  await expect(card).toHaveAttribute("data-status", "running");
  for (const step of ["Pending", "Scheduling", "Scheduled"]) {
    await expect(timelineStep(card, step, t)).toHaveAttribute("data-state", "done");
  }
  await expect(card).toContainText("Time left");

  await session.endSession(lab.title);
  await expect(page.getByRole("dialog")).toBeHidden();
  await expect(home.heading).toBeVisible();
  await expect(home.sessionCard(lab.title)).toBeHidden();
  // Not gone without a trace: the ended session is a past one, with no self-check yet.
  await expect(home.pastSession(lab.title)).toContainText(t("sessions.past.notChecked"));
  await expect(home.launchButton(lab.title)).toBeEnabled();

  await home.signOut.click();
  await expect(signIn.heading).toBeVisible();
  await page.goto("/");
  await expect(signIn.heading).toBeVisible();
});
