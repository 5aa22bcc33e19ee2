import { readFile } from "node:fs/promises";
import { expect, test } from "./fixtures.ts";
import { CheckMyWorkPanel } from "./pages/check-my-work.ts";
import { ConsoleView } from "./pages/console-view.ts";
import { GradingPage } from "./pages/grading-page.ts";

// linux-basics: its self-checks are ~/hello.txt containing hello (2 points) and the directory
// ~/notes (1 point); five checks make 10 points in all.
test("a student checks their work, fixes the task in the console, and passes", async ({ apiAs, pageAs }) => {
  const alice = await apiAs("alice");
  const lab = await alice.lab("linux-basics");
  const session = await alice.launchRunning(lab.id);

  const page = await pageAs("alice");
  const panel = new CheckMyWorkPanel(page);
  await panel.goto(session.id);
  await expect(panel.region.getByRole("region", { name: "Latest check" })).toHaveCount(0);
  await expect(panel.region).toContainText("No checks yet.");

  await panel.button.click();
  await expect(panel.latest).toContainText("0 of 3 points");
  const helloCheck = panel.latestCheck("Create ~/hello.txt containing hello");
  await expect(helloCheck).toContainText("Failed");
  await expect(helloCheck).toContainText("0/2 points");
  await expect(helloCheck).toContainText("Hint: Use echo and a redirect.");
  await helloCheck.getByText("Output").click();
  await expect(helloCheck.locator("pre")).toHaveText(
    "grep: /home/student/hello.txt: No such file or directory",
  );

  // Checking again straight away is too soon: the panel says how long to wait, then lets the student.
  await panel.button.click();
  await expect(panel.region).toContainText(
    /You checked your work a moment ago\. You can check again in \d+ seconds?\./,
  );
  await expect(panel.button).toBeDisabled();

  // The fix, typed into the console beside the panel.
  await new ConsoleView(page).run("echo hello > ~/hello.txt && mkdir -p ~/notes");

  await expect(panel.button).toBeEnabled({ timeout: 15_000 });
  await panel.button.click();
  await expect(panel.latest).toContainText("3 of 3 points");
  await expect(panel.latestCheck("Create ~/hello.txt containing hello")).toContainText("Passed");
  await expect(panel.latestCheck("Create the directory ~/notes")).toContainText("Passed");
  await expect(panel.earlier.getByRole("listitem")).toHaveCount(1);
  await expect(panel.earlier).toContainText("0 of 3 points");
});

test("an instructor grades three students, follows the run, and downloads the CSV", async ({
  apiAs,
  pageAs,
}) => {
  const owners = ["alice", "bob", "tara"] as const;
  const lab = await (await apiAs("alice")).lab("linux-basics");
  const sessions = new Map<string, string>();
  try {
    for (const owner of owners) {
      const api = await apiAs(owner);
      const session = await api.launchRunning(lab.id);
      sessions.set(owner, session.id);
    }
    // Bob did the first task; the others nothing yet.
    const bob = new ConsoleView(await pageAs("bob"));
    await bob.goto(sessions.get("bob")!);
    await bob.run("echo hello > ~/hello.txt");

    const page = await pageAs("ivan");
    const grading = new GradingPage(page);
    await grading.open(lab.title);
    await expect(grading.heading).toHaveText(`Grading: ${lab.title}`);
    await expect(page.getByText("This lab has not been graded yet.")).toBeVisible();
    await expect(page.getByRole("radio", { name: /Every running session \(3\)/ })).toBeChecked();

    await grading.startButton.click();
    await expect(page.getByText("3 of 3 sessions graded.")).toBeVisible();
    await expect(grading.progress).toHaveAttribute("value", "3");
    await expect(page.getByText("Completed", { exact: true })).toBeVisible();
    await expect(grading.rowFor("bob").getByRole("cell").nth(1)).toHaveText("2 / 10");
    for (const owner of ["alice", "tara"]) {
      await expect(grading.rowFor(owner).getByRole("cell").nth(1)).toHaveText("0 / 10");
    }
    await expect(grading.rowFor("bob")).toContainText("Yes");
    // Each check's column is headed by its title, as the lab file words it, not by its id.
    for (const check of lab.checks) {
      await expect(grading.results.getByRole("columnheader", { name: check.title })).toBeVisible();
    }
    // Every one of them lost points: the button says so, not "failed" of a run where all were graded.
    await expect(
      page.getByRole("button", {
        name: "Grade again the 3 sessions that lost points or could not be graded",
      }),
    ).toBeVisible();

    const download = page.waitForEvent("download");
    await grading.downloadCsv.click();
    const file = await download;
    expect(file.suggestedFilename()).toBe("linux-basics-grades.csv");
    const rows = (await readFile(await file.path(), "utf8")).trim().split("\r\n");
    expect(rows[0]).toBe(
      "student,lab,score,max,hello-file (max 2),notes-dir (max 1),private-file (max 2),line-count (max 2),greet-script (max 3),graded at,run id",
    );
    const byStudent = new Map(rows.slice(1).map((row) => [row.split(",")[0], row.split(",").slice(1, 9)]));
    expect([...byStudent.keys()].sort()).toEqual(["alice", "bob", "tara"]);
    expect(byStudent.get("bob")).toEqual(["linux-basics", "2", "10", "2", "0", "0", "0", "0"]);
    expect(byStudent.get("alice")).toEqual(["linux-basics", "0", "10", "0", "0", "0", "0", "0"]);

    // A TA follows the same results but cannot start a run.
    const taPage = await pageAs("tara");
    const taGrading = new GradingPage(taPage);
    await taGrading.open(lab.title);
    await expect(taGrading.rowFor("bob").getByRole("cell").nth(1)).toHaveText("2 / 10");
    await expect(taGrading.startButton).toHaveCount(0);
    await expect(taPage.getByText("Only instructors start grading runs")).toBeVisible();
  } finally {
    // The fixture ends the students' sessions; tara is a TA.
    await (await apiAs("tara")).endAllSessions();
  }
});
