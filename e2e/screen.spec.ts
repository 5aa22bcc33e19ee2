import { expect, test } from "./fixtures.ts";
import { ScreenView } from "./pages/screen-view.ts";
import { WallPage } from "./pages/wall-page.ts";

// labs/screen-basics.yaml offers its serial console and its screen, so its user data logs the student
// in on tty1 too: the emulator's sandboxed guests show that shell on their screen (docs/vnc.md), and
// what is typed there is echoed after its prompt's ":~$", which is how these tests see keys arrive.
// Each reads the text back from noVNC's canvas in the page, so what is checked is what a person sees.
const screenLab = "screen-basics";

test("the student opens the screen tab, sees the shell on the VM's screen, types into it, and a reload returns to it", async ({
  apiAs,
  pageAs,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(screenLab);
  const page = await pageAs("alice");
  const screen = new ScreenView(page);

  await page.goto(`/sessions/${session.id}`);
  // The serial console is the lab's first console: its tab is open; the screen has one beside it.
  await expect(page.getByRole("tab", { name: screen.t("console.tabs.serial"), exact: true })).toHaveAttribute(
    "aria-selected",
    "true",
  );
  await screen.tab.click();
  await expect(page).toHaveURL(/\?console=screen$/);
  await screen.live();
  await screen.shows(":~$");
  await expect(screen.region).toContainText(screen.t("console.keyboard.yours"));
  await expect(screen.viewers.getByRole("listitem")).toHaveText(["alice (you) — Student, typing"]);

  await screen.type("student1");
  await screen.shows(":~$ student1");

  await page.reload();
  await expect(screen.tab).toHaveAttribute("aria-selected", "true");
  await screen.live();
  // The BFF sends the screen it keeps first: nothing typed is lost over a reload.
  await screen.shows(":~$ student1");
});

test("a TA observes the screen read-only, takes the keyboard and types, the student sees it, and a third viewer cuts nobody off", async ({
  apiAs,
  pageAs,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(screenLab);
  const student = new ScreenView(await pageAs("alice"));
  await student.goto(session.id);
  await student.shows(":~$");

  const ta = new ScreenView(await pageAs("tara"));
  await ta.goto(session.id);
  await expect(ta.region).toHaveAttribute("data-mode", "observe");
  await ta.shows(":~$");
  await expect(ta.region).toContainText(ta.t("console.keyboard.studentHas"));
  await expect(ta.specialKeys).toBeDisabled();
  await expect(ta.pasteButton).toBeDisabled();
  await expect(student.viewers.getByRole("listitem")).toHaveText([
    "alice (you) — Student, typing",
    "tara — TA, watching",
  ]);

  // Read-only: the TA's keys reach nothing (noVNC is view-only, and the BFF would drop them).
  await ta.type("ignored");
  await student.type("abc");
  await student.shows(":~$ abc");
  await expect.poll(async () => (await ta.text()).join("\n")).toContain(":~$ abc");
  expect((await student.text()).join("\n")).not.toContain("ignored");

  await ta.takeKeyboard.click();
  await expect(student.keyboardNews).toHaveText("tara (TA) took the keyboard and is typing in this VM.");
  await expect(ta.region).toContainText(ta.t("console.keyboard.yours"));
  await expect(ta.specialKeys).toBeEnabled();
  await ta.type("xyz");
  await student.shows(":~$ abcxyz");

  // Meanwhile the student's keys reach nothing.
  await student.type("q");

  // A third viewer, an instructor: everyone stays connected and sees the same screen.
  const ivan = new ScreenView(await pageAs("ivan"));
  await ivan.goto(session.id);
  await ivan.shows(":~$ abcxyz");
  await expect(student.viewers.getByRole("listitem")).toHaveCount(3);
  await ta.type("9");
  for (const viewer of [student, ta, ivan]) {
    await expect(viewer.region).toHaveAttribute("data-status", "connected");
    await viewer.shows(":~$ abcxyz9");
  }
  expect((await student.text()).join("\n")).not.toContain("abcxyzq");

  await ta.giveBackKeyboard.click();
  await expect(student.keyboardNews).toHaveText(
    "tara (TA) no longer has the keyboard: it is back with the student.",
  );
  await expect(student.region).toContainText(student.t("console.keyboard.yours"));
});

test("a paste is typed into the VM key by key, and the page says how much was typed", async ({
  apiAs,
  pageAs,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(screenLab);
  const student = new ScreenView(await pageAs("alice"));
  await student.goto(session.id);
  await student.shows(":~$");

  await student.paste("Pasted-Name_42");
  await student.shows(":~$ Pasted-Name_42");

  // A character no keyboard types is refused, and nothing of the text is typed.
  await student.pasteButton.click();
  const dialog = student.page.getByRole("dialog", { name: student.t("screen.paste.title") });
  await dialog.getByRole("textbox", { name: student.t("screen.paste.label") }).fill("naïve");
  await dialog.getByRole("button", { name: student.t("screen.paste.confirm") }).click();
  await expect(dialog.getByRole("alert")).toHaveText(student.t("screen.paste.refused.unsupported"));
  await dialog.getByRole("button", { name: student.t("common.cancel") }).click();
  expect((await student.text()).join("\n")).not.toContain(":~$ na");
});

// WARNING: fixme until the sandboxed guest answers Ctrl+Alt+Del as a Debian guest does on tty1
// (systemd's ctrl-alt-del.target: the machine reboots, and tty1 comes back at a fresh login prompt).
// Its tty1 (src/emulator/guests/screen/) takes only characters, Return and BackSpace, so nothing on
// the screen can show the keys arrived; the SPA's side is in special-keys.test.ts.
test("Ctrl+Alt+Del from the special keys reaches the guest", async ({ apiAs, pageAs }) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(screenLab);
  const student = new ScreenView(await pageAs("alice"));
  await student.goto(session.id);
  await student.shows(":~$");
  await student.type("before-reboot");
  await student.shows(":~$ before-reboot");

  await student.pressSpecialKey("Ctrl+Alt+Del");
  await expect
    .poll(async () => (await student.text()).join("\n"), { timeout: 60_000 })
    .not.toContain("before-reboot");
  await student.shows(":~$", 60_000);
});

test("the class wall shows a graphical session's screen in miniature, and what the student types reaches it", async ({
  apiAs,
  pageAs,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(screenLab);
  const wall = new WallPage(await pageAs("tara"));
  await wall.goto(screenLab);
  const miniature = wall.desktopOf(session.id);
  await expect(miniature).toBeVisible();
  await expect(miniature).toHaveAttribute("alt", "alice's screen");
  // A real picture, decoded by the browser: 240 pixels wide, from the 720x400 screen.
  await expect.poll(() => miniature.evaluate((image: HTMLImageElement) => image.naturalWidth)).toBe(240);
  const before = await miniature.getAttribute("src");

  const student = new ScreenView(await pageAs("alice"));
  await student.goto(session.id);
  await student.shows(":~$");
  await student.type("for-the-wall");
  await student.shows(":~$ for-the-wall");
  await expect.poll(() => miniature.getAttribute("src")).not.toBe(before);
});
