import { expect, test } from "./fixtures.ts";
import { AnnouncementBanners, AnnouncementForm } from "./pages/announcements.ts";
import { ConsoleView } from "./pages/console-view.ts";
import { WallPage } from "./pages/wall-page.ts";
import { expectAccessible } from "./support/accessibility.ts";
import { translator } from "./support/catalog.ts";

const t = translator("en");

test("a TA finds the stuck student by searching every screen of the class wall, reads it enlarged, observes, and tells the class", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const [alice, bob, carol] = await Promise.all(
    (["alice", "bob", "carol"] as const).map((name) => apiAs(name)),
  );
  const [aliceSession, bobSession, carolSession] = await Promise.all(
    [alice!, bob!, carol!].map((student) => student.launchRunning(lab.id)),
  );

  // Bob is stuck: his screen says Permission denied. Carol met it too, but it scrolled out of her
  // screen (60 lines: past her screen's rows, within the scrollback the BFF searches); Alice asks
  // for help about something else.
  const bobConsole = new ConsoleView(await pageAs("bob"));
  await bobConsole.goto(bobSession!.id);
  await bobConsole.run("cat /etc/shadow");
  await expect(bobConsole.rows).toContainText("Permission denied");
  const carolConsole = new ConsoleView(await pageAs("carol"));
  await carolConsole.goto(carolSession!.id);
  await carolConsole.run("cat /etc/gshadow; seq 1 60");
  // Alice printed a word and cleared her screen: bash's `clear` erases the screen and the scrollback.
  const aliceConsole = new ConsoleView(await pageAs("alice"));
  await aliceConsole.goto(aliceSession!.id);
  await aliceConsole.run("echo hello''_world_x; clear");
  await expect(aliceConsole.rows).not.toContainText("hello_world_x");
  await alice!.raiseHand(aliceSession!.id, "where is the lab sheet?");

  const wall = new WallPage(await pageAs("tara"));
  await wall.goto(lab.id);
  await expect(wall.state).toHaveAttribute("data-state", "live");
  await expect(wall.tiles).toHaveCount(3);
  await expect(wall.screenOf(bobSession!.id)).toContainText("Permission denied");
  await expect(wall.tileOf(aliceSession!.id)).toContainText("Hand raised");
  expect(await wall.order(), "a raised hand first").toEqual([
    aliceSession!.id,
    bobSession!.id,
    carolSession!.id,
  ]);
  expect(await wall.scrollsSideways(), "sideways scrolling at 1280x800").toBe(false);

  // The search: matching screens first, the match marked, the scrollback's said.
  await wall.search("Permission denied");
  await expect(wall.searchStatus).toHaveText(t("wall.search.count", { matching: 2, count: 3 }));
  expect(await wall.order(), "matching screens first").toEqual([
    bobSession!.id,
    carolSession!.id,
    aliceSession!.id,
  ]);
  await expect(wall.screenOf(bobSession!.id).locator("mark").first()).toHaveText("Permission denied");
  await expect(wall.tileOf(carolSession!.id)).toHaveAttribute("data-match", "scrollback");
  await expect(wall.tileOf(carolSession!.id).getByTestId("wall-match")).toHaveText(
    t("wall.match.scrollbackOnly", { count: 1 }),
  );
  await expect(wall.screenOf(carolSession!.id).locator("mark")).toHaveCount(0);
  await expect(wall.tileOf(aliceSession!.id)).not.toHaveAttribute("data-match");
  await expectAccessible(wall.page, "class wall with a search");

  // What was cleared off a screen is found too, and said to be off it.
  await wall.search("hello_world_x");
  await expect(wall.searchStatus).toHaveText(t("wall.search.count", { matching: 1, count: 3 }));
  await expect(wall.tileOf(aliceSession!.id)).toHaveAttribute("data-match", "scrollback");
  await expect(wall.tileOf(aliceSession!.id).getByTestId("wall-match")).toHaveText(
    t("wall.match.scrollbackOnly", { count: 1 }),
  );
  await expect(wall.screenOf(aliceSession!.id)).not.toContainText("hello_world_x");

  // Case, and regular expressions: a bad one is refused with the reason, aloud.
  await wall.matchCase.check();
  await wall.search("permission denied");
  await expect(wall.searchStatus).toHaveText(t("wall.search.count", { matching: 0, count: 3 }));
  await wall.matchCase.uncheck();
  await wall.regex.check();
  await wall.search("Permission\\s+den(ied|y)");
  await expect(wall.searchStatus).toHaveText(t("wall.search.count", { matching: 2, count: 3 }));
  await wall.searchBox.fill("Permission (denied");
  await expect(wall.searchStatus).toHaveAttribute("data-search", "refused");
  await expect(wall.searchStatus).toContainText(t("wall.search.refused"));
  await expect(wall.tiles).toHaveCount(3);
  await wall.regex.uncheck();
  await wall.search("Permission denied");

  // Filters narrow the wall and stay in its URL, so a reload (or a shared link) shows the same.
  await wall.handFilter.check();
  await expect(wall.tiles).toHaveCount(1);
  await expect(wall.tileOf(aliceSession!.id)).toBeVisible();
  await expect(wall.searchStatus).toContainText(t("wall.shown", { shown: 1, count: 3 }));
  await wall.page.reload();
  await expect(wall.handFilter).toBeChecked();
  await expect(wall.searchBox).toHaveValue("Permission denied");
  await expect(wall.tiles).toHaveCount(1);
  await wall.clearFilters.click();
  await expect(wall.tiles).toHaveCount(3);
  await expect(wall.searchStatus).toHaveText(t("wall.search.count", { matching: 2, count: 3 }));

  // The keyboard: Tab reaches the grid once, at its first tile; arrows, Home and End move along it.
  // Each tile focused shows its screen enlarged, over the grid: no tile moves.
  const before = await wall.tileBoxes();
  await wall.searchBox.focus();
  for (let presses = 0; presses < 20 && (await wall.focusedSession()) === null; presses += 1) {
    await wall.page.keyboard.press("Tab");
  }
  expect(await wall.focusedSession(), "Tab enters the grid at its first tile").toBe(bobSession!.id);
  const bobEnlarged = wall.tileOf(bobSession!.id).getByTestId("wall-enlarged");
  await expect(bobEnlarged).toBeVisible();
  await expect(bobEnlarged).toContainText("Permission denied");
  await expect(bobEnlarged.locator("mark").first()).toHaveText("Permission denied");
  const enlargedFont = await bobEnlarged
    .locator("pre")
    .evaluate((pre) => parseFloat(getComputedStyle(pre).fontSize));
  expect(enlargedFont, "the enlarged screen's text size (px)").toBeGreaterThanOrEqual(11);
  expect(await wall.tileBoxes(), "no tile moves when one is enlarged").toEqual(before);
  expect(await wall.scrollsSideways(), "sideways scrolling with a screen enlarged").toBe(false);

  await wall.page.keyboard.press("ArrowRight");
  expect(await wall.focusedSession()).toBe(carolSession!.id);
  await expect(wall.enlarged).toHaveCount(1);
  await expect(wall.tileOf(carolSession!.id).getByTestId("wall-enlarged")).toBeVisible();
  await wall.page.keyboard.press("End");
  expect(await wall.focusedSession()).toBe(aliceSession!.id);
  await wall.page.keyboard.press("ArrowLeft");
  expect(await wall.focusedSession()).toBe(carolSession!.id);
  await wall.page.keyboard.press("Home");
  expect(await wall.focusedSession()).toBe(bobSession!.id);
  await wall.page.keyboard.press("Escape");
  await expect(wall.enlarged).toHaveCount(0);
  expect(await wall.tileBoxes()).toEqual(before);

  await expect(
    wall.grid.locator('[tabindex="0"]'),
    "one tile in the tab order: the last focused",
  ).toHaveAttribute("data-session", bobSession!.id);
  await wall.page.keyboard.press("Tab");
  expect(await wall.focusedSession(), "Tab leaves the grid after one tile").toBeNull();

  // Enter observes Bob's console, read-only, where the TA sees what he sees.
  await wall.tileOf(bobSession!.id).focus();
  await wall.page.keyboard.press("Enter");
  const observer = new ConsoleView(wall.page);
  await expect(observer.region).toHaveAttribute("data-mode", "observe");
  await expect(observer.region).toHaveAttribute("data-status", "connected");
  await expect(observer.rows).toContainText("Permission denied");

  // Back on the wall, the TA tells the whole class; Bob's session page shows it within a poll.
  await wall.page.goBack();
  const announce = new AnnouncementForm(wall.page);
  await announce.send("/etc/shadow is root's alone: use sudo, as step 3 says.", "The whole lab");
  await expect(new AnnouncementBanners(bobConsole.page).withText("use sudo")).toBeVisible();
});

test("the class wall fits a tablet, where a tap enlarges a screen and a second tap observes it", async ({
  apiAs,
  browser,
  lab,
}) => {
  const bob = await apiAs("bob");
  const session = await bob.launchRunning(lab.id);
  const tara = await apiAs("tara");
  const context = await browser.newContext({
    storageState: await tara.request.storageState(),
    viewport: { width: 820, height: 1180 },
    hasTouch: true,
    isMobile: true,
  });
  try {
    const wall = new WallPage(await context.newPage());
    await wall.goto(lab.id);
    await expect(wall.state).toHaveAttribute("data-state", "live");
    await expect(wall.tiles).toHaveCount(1);
    expect(await wall.scrollsSideways(), "sideways scrolling on a tablet").toBe(false);

    const before = await wall.tileBoxes();
    await wall.tileOf(session.id).tap();
    await expect(wall.tileOf(session.id).getByTestId("wall-enlarged")).toBeVisible();
    await expect(wall.page).toHaveURL(/\/wall$/);
    expect(await wall.tileBoxes()).toEqual(before);
    expect(await wall.scrollsSideways(), "sideways scrolling with a screen enlarged").toBe(false);

    await wall.enlarged.tap();
    await expect(wall.page).toHaveURL(new RegExp(`/sessions/${session.id}$`));
    await expect(new ConsoleView(wall.page).region).toHaveAttribute("data-mode", "observe");
  } finally {
    await context.close();
  }
});
