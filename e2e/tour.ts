// The screenshot tour in docs/tour/: every page a student, a TA and an instructor meet in their first
// minutes, taken from a fresh server, with a line on what each shows. `npm run docs:screenshots`
// retakes it (e2e/docs-screenshots.config.ts); CI never does, so tracked files change only when someone asks.
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { CheckMyWorkPanel } from "./pages/check-my-work.ts";
import { ConsoleView } from "./pages/console-view.ts";
import { HomePage } from "./pages/home-page.ts";
import { timelineStep } from "./pages/session-card.ts";
import { SessionPage } from "./pages/session-page.ts";
import { SignInPage } from "./pages/sign-in-page.ts";

const tourDir = new URL("../docs/tour/", import.meta.url);

interface Shot {
  file: string;
  who: string;
  caption: string;
}

test("the screenshot tour of docs/tour", async ({ page, apiAs, pageAs }) => {
  test.setTimeout(15 * 60_000);
  const shots: Shot[] = [];
  const shoot = async (on: Page, file: string, who: string, caption: string) => {
    await on.screenshot({ path: fileURLToPath(new URL(`${file}.png`, tourDir)), fullPage: true });
    shots.push({ file: `${file}.png`, who, caption });
  };
  const lab = await (await apiAs("alice")).lab("linux-basics");
  await page.setViewportSize({ width: 1280, height: 800 });

  // A student.
  const signIn = new SignInPage(page);
  await signIn.goto();
  await shoot(
    page,
    "01-sign-in",
    "everyone",
    "Signing in: the demo accounts, or the school's sign-in (OIDC).",
  );
  await signIn.signIn("alice");
  const home = new HomePage(page);
  await expect(home.heading).toBeVisible();
  await shoot(page, "02-student-home", "student", "The labs a student can launch, and their sessions.");
  await home.launchButton(lab.title).click();
  const session = new SessionPage(page);
  await expect(session.heading).toBeVisible();
  await shoot(
    page,
    "03-launching",
    "student",
    "Launch opens the session: the VM's start, step by step, and the boot log.",
  );
  const card = session.card(lab.title);
  await expect(card).toHaveAttribute("data-status", "running", { timeout: 120_000 });
  await expect(timelineStep(card, "Setup", session.t)).toHaveAttribute("data-state", "current");
  await shoot(
    page,
    "03b-setting-up",
    "student",
    "Running is not ready yet: cloud-init runs the lab's set-up, about a minute, before the prompt.",
  );
  const terminal = new ConsoleView(page);
  await terminal.region.scrollIntoViewIfNeeded();
  await expect(terminal.rows).toContainText(/student@[\w-]+:~\$/, { timeout: 120_000 });
  await terminal.run("echo hello > ~/hello.txt; ls -l");
  await shoot(
    page,
    "04-session",
    "student",
    "The session: the console at the window's size, the lab's tasks, files, help.",
  );
  const checks = new CheckMyWorkPanel(page);
  await checks.button.click();
  await expect(checks.latest).toBeVisible();
  await checks.region.scrollIntoViewIfNeeded();
  await shoot(
    page,
    "05-check-my-work",
    "student",
    "Check my work: the self-checks run in the VM, each with its points and hint.",
  );

  // A TA.
  await (await apiAs("bob")).launchRunning(lab.id);
  const ta = await pageAs("tara");
  await ta.setViewportSize({ width: 1280, height: 800 });
  await ta.goto("/sessions");
  await expect(ta.getByRole("table", { name: "Sessions" })).toContainText("bob");
  await shoot(
    ta,
    "06-ta-sessions",
    "TA",
    "Every session of the TA's sections, filtered by lab, status or student.",
  );
  await ta.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Class wall" }).click();
  await shoot(ta, "07-ta-walls", "TA", "The class wall, one a lab, is in the navigation.");
  await ta.getByRole("main").getByRole("link", { name: lab.title }).click();
  await expect(ta.getByTestId("wall-tile")).toHaveCount(2);
  await expect(ta.getByTestId("wall-screen").filter({ hasText: "hello.txt" })).toHaveCount(1);
  await shoot(
    ta,
    "08-ta-class-wall",
    "TA",
    "The class wall: every console live, searchable; announcements to the lab.",
  );
  await ta.getByRole("link", { name: "Observe alice's console" }).click();
  const observed = new ConsoleView(ta);
  await expect(observed.region).toHaveAttribute("data-mode", "observe");
  await expect(observed.rows).toContainText("hello.txt");
  await shoot(
    ta,
    "09-ta-observes",
    "TA",
    "Observing: the student's screen exactly, read-only until the TA takes the keyboard.",
  );

  // An instructor.
  const ivan = await pageAs("ivan");
  await ivan.setViewportSize({ width: 1280, height: 800 });
  await ivan.goto(`/grading/${lab.id}`);
  await ivan.getByRole("button", { name: "Start grading" }).click();
  await expect(ivan.getByText("Completed", { exact: true })).toBeVisible({ timeout: 60_000 });
  await shoot(
    ivan,
    "10-instructor-grading",
    "instructor",
    "Grading a lab: every running session, check by check, exported as CSV or JSON.",
  );
  await ivan.goto("/classes");
  await shoot(
    ivan,
    "11-instructor-classes",
    "instructor",
    "Classes: VMs booted ahead of a scheduled class (warm pools).",
  );
  await ivan.goto("/recordings");
  await shoot(
    ivan,
    "12-recordings",
    "TA and instructor",
    "Recordings of every console, to replay, seek and download.",
  );
  await ivan.goto("/admin/doctor");
  await expect(ivan.getByRole("list", { name: "Checks" })).toBeVisible();
  await shoot(
    ivan,
    "13-instructor-doctor",
    "instructor",
    "The doctor: what the cluster needs, checked, with the fix for each.",
  );
  await ivan.goto("/admin/audit");
  await shoot(ivan, "14-instructor-audit", "instructor", "The audit log: who did what to which session.");

  // The student again, after ending the session.
  await page.bringToFront();
  await session.endSession(lab.title);
  await expect(home.pastSession(lab.title)).toBeVisible();
  await shoot(
    page,
    "15-student-past-sessions",
    "student",
    "After End: the session stays on the home page as a record, with its last self-check.",
  );

  const index = [
    "# A tour of Lab Console",
    "",
    "What a student, a TA and an instructor see in their first minutes, taken by `npm run docs:screenshots`",
    "from a fresh `npm start` (the embedded KubeVirt emulator, demo accounts).",
    "",
    ...shots.flatMap((shot) => [
      `## ${shot.caption}`,
      "",
      `_${shot.who}_`,
      "",
      `![${shot.caption}](${shot.file})`,
      "",
    ]),
  ];
  await writeFile(new URL("README.md", tourDir), index.join("\n"));
});
