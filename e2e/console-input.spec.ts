import type { Locator } from "@playwright/test";
import type { Session } from "../src/common/api.ts";
import { fontSizes } from "../src/web/features/console/lib/font-size.ts";
import { expect, test } from "./fixtures.ts";
import { ConsoleView } from "./pages/console-view.ts";
import { GuestInputProbe } from "./pages/guest-input-probe.ts";
import { ImeKeyboard } from "./pages/ime-keyboard.ts";
import { RecordingPlayer } from "./pages/recording-player.ts";
import { characterCell, differingPixels } from "./pages/terminal-pixels.ts";
import { WallPage } from "./pages/wall-page.ts";
import type { DemoUser } from "./support/demo-users.ts";
import type { LabApi } from "./support/lab-api.ts";
import { translator } from "./support/catalog.ts";

// Japanese and Chinese typed through an input method, wide characters on every screen that shows a
// console, and glyphs that sit at the bottom of their cell. What the guest received is read back from
// the guest itself (its bytes in hex), never only from the screen.

const t = translator("en");

interface Opened {
  session: Session;
  view: ConsoleView;
}

async function openAliceConsole(
  apiAs: (user: DemoUser) => Promise<LabApi>,
  pageAs: (user: DemoUser) => Promise<ConsoleView["page"]>,
  labId: string,
): Promise<Opened> {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(labId);
  const view = new ConsoleView(await pageAs("alice"));
  await view.goto(session.id);
  await expect(view.region).toHaveAttribute("data-status", "connected");
  await expect(view.region).toContainText(t("console.keyboard.yours"));
  return { session, view };
}

test("Japanese typed through an IME reaches the guest once, in UTF-8", async ({ apiAs, pageAs, lab }) => {
  const { view } = await openAliceConsole(apiAs, pageAs, lab.id);
  const probe = new GuestInputProbe(view);
  await probe.start();
  const ime = await ImeKeyboard.of(view.page);
  // にほんご → 日本語, then にゅうりょく → 入力 and 「。」: two conversions and a full stop on one line.
  await ime.compose(["n", "に", "にh", "にほ", "にほn", "にほん", "にほんg", "にほんご", "日本語"], "日本語");
  await ime.compose(["n", "にゅ", "にゅう", "にゅうr", "にゅうりょ", "にゅうりょく", "入力"], "入力");
  await ime.punctuation("Period", "。");
  await view.page.keyboard.press("Enter");
  await probe.expectReceived("日本語入力。");
});

test("Chinese typed through an IME, with full-width punctuation, reaches the guest once", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const { view } = await openAliceConsole(apiAs, pageAs, lab.id);
  const probe = new GuestInputProbe(view);
  await probe.start();
  const ime = await ImeKeyboard.of(view.page);
  await ime.compose(["n", "ni", "nih", "niha", "nihao", "你好"], "你好");
  await ime.punctuation("Comma", "，");
  await ime.compose(["s", "sh", "shi", "shij", "shiji", "shijie", "世界"], "世界");
  await ime.punctuation("Period", "。");
  await view.page.keyboard.press("Enter");
  await probe.expectReceived("你好，世界。");
});

test("with screen reader mode on, IME input and text from the emoji picker or dictation reach the guest once", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const { view } = await openAliceConsole(apiAs, pageAs, lab.id);
  await view.region.getByRole("button", { name: t("console.screenReaderMode") }).click();
  await expect(view.region.getByRole("button", { name: t("console.screenReaderMode") })).toHaveAttribute(
    "aria-pressed",
    "true",
  );
  const probe = new GuestInputProbe(view);
  await probe.start();
  const ime = await ImeKeyboard.of(view.page);
  await ime.compose(["z", "zh", "zho", "zhon", "zhong", "中"], "中");
  await ime.insert("文😀");
  await view.page.keyboard.type("ok");
  await view.page.keyboard.press("Enter");
  await probe.expectReceived("中文😀ok");
});

test("underscores show in the console at every text size", async ({ apiAs, pageAs, lab }) => {
  const { view } = await openAliceConsole(apiAs, pageAs, lab.id);
  await printUnderscoreAndSpace(view);
  const smaller = view.region.getByRole("button", { name: t("console.smallerText") });
  const larger = view.region.getByRole("button", { name: t("console.largerText") });
  // The size is clamped: this many clicks reach the smallest from anywhere.
  for (let click = fontSizes.min; click < fontSizes.max; click += 1) await smaller.click();
  const hidden: number[] = [];
  for (let size: number = fontSizes.min; ; size += 1) {
    await expect(view.rows.locator("div").first()).toHaveCSS("font-size", `${size}px`);
    await view.fitsItsBox();
    if (!(await underscoreShows(view.rows))) hidden.push(size);
    if (size === fontSizes.max) break;
    await larger.click();
  }
  expect(hidden, "text sizes (px) at which x86_64 reads x86 64").toEqual([]);
});

test("wide characters keep their two columns in the console, its replay, the class wall and the recording; so do underscores", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const { session, view } = await openAliceConsole(apiAs, pageAs, lab.id);
  await printWideAndNarrow(view);
  await printUnderscoreAndSpace(view);
  await expectAligned(view.rows);

  await view.reload();
  await expect(view.rows).toContainText(narrowLine);
  await expectAligned(view.rows);

  const wall = new WallPage(await pageAs("tara"));
  await wall.goto(lab.id);
  await expect(wall.screenOf(session.id)).toContainText(narrowLine);
  await expect(wall.screenOf(session.id)).toContainText(wideLine);
  await expectAligned(wall.screenOf(session.id));
  // A search's mark around wide characters keeps them in their columns too.
  await wall.search("語中");
  await expect(wall.screenOf(session.id).locator("mark")).toHaveText("語中");
  await expectAligned(wall.screenOf(session.id));

  const ta = await pageAs("tara");
  await ta.goto(`/recordings/${session.id}`);
  const player = new RecordingPlayer(ta);
  await player.play("8");
  await expect(player.screen).toContainText("x86 64");
  await expectAligned(player.screen);
  expect(await underscoreShows(player.screen), "the recording shows x86_64's underscore").toBe(true);
});

// 日本語中文 is five wide characters: ten columns, as many as 1234567890.
const wideLine = "日本語中文|";
const narrowLine = "1234567890|";

/** Printed from escapes, so only the output (never the echoed command) holds the characters. */
async function printWideAndNarrow(view: ConsoleView): Promise<void> {
  await view.typeLine("printf '\\u65e5\\u672c\\u8a9e\\u4e2d\\u6587|\\n1234567890|\\n'");
  await expect(view.rows).toContainText(narrowLine);
}

/** Each line with a blank line under it, so a glyph drawn past its cell's bottom lands on nothing. */
async function printUnderscoreAndSpace(view: ConsoleView): Promise<void> {
  await view.typeLine("printf 'x86_%s\\n\\nx86 %s\\n\\n' 64 64");
  await expect(view.rows).toContainText("x86 64");
}

async function expectAligned(screen: Locator): Promise<void> {
  const afterWide = await characterCell(screen, wideLine, 5);
  const afterNarrow = await characterCell(screen, narrowLine, 10);
  expect(
    Math.abs(afterWide.x - afterNarrow.x),
    "the | after five wide characters sits in column 11",
  ).toBeLessThan(afterNarrow.width / 2);
}

/** The underscore's cell differs from a space's: `x86_64` does not read `x86 64`. */
async function underscoreShows(screen: Locator): Promise<boolean> {
  const underscore = await characterCell(screen, "x86_64", 3);
  const space = await characterCell(screen, "x86 64", 3);
  return (await differingPixels(screen.page(), underscore, space)) > 0;
}
