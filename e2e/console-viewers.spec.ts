import { expect, test } from "./fixtures.ts";
import { ConsoleView } from "./pages/console-view.ts";

test("the student sees who watches their console, live, and is told when staff take or give back the keyboard", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);

  const student = new ConsoleView(await pageAs("alice"));
  await student.goto(session.id);
  await expect(student.region).toHaveAttribute("data-status", "connected");
  await expect(student.viewers.getByRole("listitem")).toHaveText(["alice (you) — Student, typing"]);

  const ta = new ConsoleView(await pageAs("tara"));
  await ta.goto(session.id);
  await expect(ta.region).toHaveAttribute("data-status", "connected");
  // Within a second of the TA's console connecting, the student's page names her and her role.
  await expect(student.viewers.getByRole("listitem")).toHaveText(
    ["alice (you) — Student, typing", "tara — TA, watching"],
    { timeout: 1000 },
  );
  // The observer sees the others too.
  await expect(ta.viewers.getByRole("listitem")).toHaveText([
    "alice — Student, typing",
    "tara (you) — TA, watching",
  ]);

  await ta.takeKeyboard.click();
  await expect(student.keyboardNews).toHaveRole("status");
  await expect(student.keyboardNews).toHaveText("tara (TA) took the keyboard and is typing in this VM.");
  await expect(student.viewers.getByRole("listitem")).toHaveText([
    "alice (you) — Student, watching",
    "tara — TA, typing",
  ]);

  await ta.giveBackKeyboard.click();
  await expect(student.keyboardNews).toHaveText(
    "tara (TA) no longer has the keyboard: it is back with the student.",
  );

  await ta.page.close();
  await expect(student.viewers.getByRole("listitem")).toHaveText(["alice (you) — Student, typing"]);
});

test("the guest follows the window of whoever has the keyboard, through the agent, typing nothing", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);
  const student = new ConsoleView(await pageAs("alice"));
  await student.goto(session.id);
  await expect(student.region).toHaveAttribute("data-status", "connected");

  // Narrower than the guest's 80 columns at boot, and than any earlier fit to the 1280-pixel page.
  await student.page.setViewportSize({ width: 640, height: 600 });
  const { cols, rows } = await student.fittedNarrowerThan(80);
  await student.typeLine("stty size; echo size-''shown");
  await expect(student.rows).toContainText("size-shown");
  await expect(student.rows).toContainText(`${rows} ${cols}`);
  await expect(student.rows).not.toContainText("stty rows");
});
