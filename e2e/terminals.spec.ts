import { expect, test } from "./fixtures.ts";
import { ConsoleView } from "./pages/console-view.ts";
import { expectAccessible } from "./support/accessibility.ts";

// linux-basics offers two terminals besides the serial console (labs/linux-basics.yaml).
test("a student opens a terminal beside the console: its own shell, sized to the window, kept over a reload", async ({
  apiAs,
  pageAs,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning("linux-basics");
  const page = await pageAs("alice");

  const terminal = new ConsoleView(page, undefined, 1);
  await terminal.goto(session.id);
  await expect(terminal.tab).toHaveAttribute("aria-selected", "true");
  await expect(page).toHaveURL(/\?terminal=1$/);
  await terminal.run("echo shell-$$ > ~/terminal-pid; tty");
  await expect(terminal.rows).toContainText("/dev/pts/");
  // The owner's window fits the PTY by itself: narrower than the 80 columns it opened with.
  await page.setViewportSize({ width: 640, height: 600 });
  const { cols, rows } = await terminal.fittedNarrowerThan(80);
  await terminal.run("stty size");
  await expect(terminal.rows).toContainText(`${rows} ${cols}`);
  await expect(terminal.rows).not.toContainText("stty rows");

  await terminal.reload();
  await expect(terminal.tab).toHaveAttribute("aria-selected", "true");
  await expect(terminal.rows).toContainText("/dev/pts/");
  await terminal.run("echo again-$$ >> ~/terminal-pid; cat ~/terminal-pid");
  const pids = (await terminal.rows.innerText()).match(/(?:shell|again)-(\d+)/g) ?? [];
  expect(new Set(pids.map((entry) => entry.split("-")[1])).size).toBe(1);

  // The serial console is still there, in its own tab, and shows none of the terminal's output.
  const serial = new ConsoleView(page);
  await serial.tab.click();
  await expect(page).not.toHaveURL(/terminal=/);
  await expect(serial.region).toHaveAttribute("data-status", "connected");
  await expect(serial.rows).not.toContainText("/dev/pts/");

  // Back to the terminal: it stayed connected while hidden, the same shell, at the same size.
  await terminal.tab.click();
  await terminal.run("echo back-$$ >> ~/terminal-pid; cat ~/terminal-pid; stty size");
  await expect(terminal.rows).toContainText(`back-${pids[0]?.split("-")[1]}`);
  await expect(terminal.rows).toContainText(`${rows} ${cols}`);
});

test("a TA watches a student's terminal read-only, and sees the tabs the lab offers", async ({
  apiAs,
  pageAs,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning("linux-basics");
  const student = new ConsoleView(await pageAs("alice"), undefined, 2);
  await student.goto(session.id);
  await student.run("echo from-the-stud''ent");

  const ta = new ConsoleView(await pageAs("tara"), undefined, 2);
  await ta.goto(session.id);
  await expect(ta.region).toHaveAttribute("data-mode", "observe");
  await expect(ta.rows).toContainText("from-the-student");
  await expect(ta.page.getByRole("tab")).toHaveCount(3);
  await expect(ta.takeKeyboard).toBeVisible();
  await expect(student.viewers).toContainText("tara");
  await expectAccessible(ta.page, "a student's terminal, observed");
});
