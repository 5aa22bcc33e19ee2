import { expect, test } from "./fixtures.ts";
import { ConsoleView } from "./pages/console-view.ts";

test("a student types in the console, a reload keeps the screen, a TA watches live and cannot type", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);

  const student = new ConsoleView(await pageAs("alice"));
  await student.goto(session.id);
  await expect(student.region).toHaveAttribute("data-status", "connected");
  await expect(student.region).toHaveAttribute("data-mode", "interactive");
  await expect(student.rows).toBeVisible();
  // The shell prints hello-lab; the echoed input reads he''llo-lab, so only the output matches.
  await student.typeLine("echo he''llo-lab");
  await expect(student.rows).toContainText("hello-lab");

  await student.reload();
  await expect(student.region).toHaveAttribute("data-status", "connected");
  await expect(student.rows).toContainText("hello-lab");

  const ta = new ConsoleView(await pageAs("tara"));
  await ta.goto(session.id);
  await expect(ta.region).toHaveAttribute("data-mode", "observe");
  await expect(ta.region).toHaveAttribute("data-status", "connected");
  await expect(ta.rows).toContainText("hello-lab");
  await expect(ta.region).toContainText("Read-only: the student has the keyboard.");
  await expect(ta.takeKeyboard).toBeVisible();

  await student.typeLine("echo live''-from-alice");
  await expect(ta.rows).toContainText("live-from-alice");

  await ta.typeLine("echo typed''-by-ta");
  // Whatever the TA typed would reach the VM before this later line of the student's.
  await student.typeLine("echo after''-ta");
  await expect(student.rows).toContainText("after-ta");
  await expect(ta.rows).toContainText("after-ta");
  await expect(student.rows).not.toContainText("typed-by-ta");
  await expect(student.rows).not.toContainText("typed''-by-ta");
});

test("the console is on screen when a student opens their session, without scrolling", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);
  const page = await pageAs("alice");
  // Not ConsoleView.goto, which scrolls the console into view.
  await page.goto(`/sessions/${encodeURIComponent(session.id)}`);
  const student = new ConsoleView(page);
  await expect(student.region).toHaveAttribute("data-status", "connected");
  // In the 1280x800 window of a small laptop: its upper rows at least (about two fifths of it shows).
  await expect(student.region.getByTestId("console-screen")).toBeInViewport({ ratio: 0.25 });
  // Drawn, since it is on screen: the boot the serial console printed before the page opened.
  await expect(student.rows).toContainText("cloud-init: finished");
});
