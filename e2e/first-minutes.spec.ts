import { expect, test } from "./fixtures.ts";
import { ConsoleView } from "./pages/console-view.ts";
import { timelineStep } from "./pages/session-card.ts";
import { SessionPage } from "./pages/session-page.ts";
import { browserLocales, labTitleIn, translator } from "./support/catalog.ts";
import type { BootLog } from "../src/common/api.ts";

// A new student's first minutes in the serial console, as a newcomer met them
// (the newcomer walk, items 1-3 and 6): the prompt is there without a key pressed, the shell starts in a home it
// can write, the guest is as wide as the window without a click, and whoever looks again (a reload, a
// TA who starts observing at another window size) sees exactly the screen the student sees.
for (const language of ["en", "ja"] as const) {
  test(`a student's serial console in ${language}: prompt, home, size and screen are right without a click`, async ({
    browser,
    apiAs,
    pageAs,
  }) => {
    const t = translator(language);
    const alice = await apiAs("alice");
    const session = await alice.launchRunning("linux-basics");
    const context = await browser.newContext({
      storageState: await alice.request.storageState(),
      locale: browserLocales[language],
      viewport: { width: 1280, height: 800 },
    });
    try {
      const student = new ConsoleView(await context.newPage(), t);
      await student.goto(session.id);
      await expect(student.region).toHaveAttribute("data-status", "connected");

      // The shell's prompt, with no key pressed: the fit to the window redraws it.
      await expect(student.rows).toContainText(/student@[\w-]+:~\$/);
      // A real guest's boot, without the emulator's words.
      await expect(student.rows).toContainText("cloud-init: finished");
      await expect(student.rows).not.toContainText("emulated");
      // Wider than the 80 columns the guest boots with, and the guest says so itself.
      await expect.poll(async () => (await student.shownGuestSize()).cols).toBeGreaterThan(100);
      await student.fitsItsBox();
      const { cols, rows } = await student.shownGuestSize();
      await student.run("stty size");
      await expect(student.rows).toContainText(`${rows} ${cols}`);
      const longLine = `${"a".repeat(40)}-one-line-${"z".repeat(50)}`;
      await student.run(`echo ${longLine}`);
      expect(await student.screenLines()).toContain(longLine);

      // The home, where the lab says everything happens, is where the shell starts, and writable.
      await student.run("echo writ''ten > here.txt; cat ~/here.txt; ls");
      await expect(student.rows).toContainText("written");
      await expect(student.rows).not.toContainText("Read-only file system");

      // A cleared screen, then new output: what a reload and an observer restore must not mix up.
      await student.run("clear; seq 1 5; echo after-clear");
      await expect(student.rows).not.toContainText("writ''ten");
      const seen = await student.screenAtPrompt();
      await student.reload();
      await expect(student.region).toHaveAttribute("data-status", "connected");
      await expect.poll(() => student.screenLines()).toEqual(seen);

      const ta = new ConsoleView(await pageAs("tara"));
      await ta.page.setViewportSize({ width: 900, height: 700 });
      await ta.goto(session.id);
      await expect(ta.region).toHaveAttribute("data-status", "connected");
      await expect(ta.guestSize).toHaveText(`${cols}×${rows}`);
      await expect.poll(() => ta.screenLines()).toEqual(seen);
      await student.run("echo live-after-observe");
      await expect.poll(() => ta.screenLines()).toEqual(await student.screenAtPrompt());
    } finally {
      await context.close();
    }
  });
}

// Running is not ready: cloud-init runs the lab's set-up for about a minute more (walk item 7). The
// step after Running lasts until the boot log has cloud-init's final message. The emulator's fast
// set-up is over before a page could show it, so the boot log reaches the page without that line
// until the test lets it through, as from a VM still setting up.
for (const language of ["en", "ja"] as const) {
  test(`a student in ${language} sees the lab's set-up after Running until cloud-init has finished`, async ({
    browser,
    apiAs,
  }) => {
    const t = translator(language);
    const alice = await apiAs("alice");
    const lab = await alice.lab("linux-basics");
    const session = await alice.launchRunning(lab.id);
    const context = await browser.newContext({
      storageState: await alice.request.storageState(),
      locale: browserLocales[language],
    });
    try {
      const page = await context.newPage();
      let settingUp = true;
      await page.route("**/api/sessions/*/boot-log", async (route) => {
        const response = await route.fetch();
        const log = (await response.json()) as BootLog;
        const lines = settingUp
          ? log.lines.filter((line) => !/Cloud-init v\. \S+ finished at/.test(line))
          : log.lines;
        await route.fulfill({ response, json: { ...log, lines } });
      });
      const sessionPage = new SessionPage(page, t);
      await page.goto(`/sessions/${session.id}`);
      const card = sessionPage.card(labTitleIn(lab, language));
      const setupStep = timelineStep(card, "Setup", t);
      await expect(setupStep).toHaveText(new RegExp(`^${t("sessions.timeline.settingUp")}\\d`));
      await expect(setupStep).toHaveAttribute("aria-current", "step");
      await expect(card).toContainText(t("sessions.card.setupHint"));

      settingUp = false;
      const after = t("sessions.timeline.after", { duration: "" }).trim();
      await expect(setupStep).toContainText(t("sessions.timeline.setUp"));
      await expect(setupStep).toContainText(after);
      await expect(setupStep).not.toHaveAttribute("aria-current");
      await expect(card).not.toContainText(t("sessions.card.setupHint"));
    } finally {
      await context.close();
    }
  });
}

for (const language of ["en", "ja"] as const) {
  test(`a TA's first minutes in ${language}: the class wall is in the navigation, with its announcements`, async ({
    browser,
    apiAs,
    pageAs,
  }) => {
    const t = translator(language);
    const alice = await apiAs("alice");
    const lab = await alice.lab("linux-basics");
    const session = await alice.launchRunning(lab.id);
    // The student at work in her console, as the TA will find her.
    const student = new ConsoleView(await pageAs("alice"));
    await student.goto(session.id);
    await expect(student.rows).toContainText(/student@[\w-]+:~\$/);
    const tara = await apiAs("tara");
    const context = await browser.newContext({
      storageState: await tara.request.storageState(),
      locale: browserLocales[language],
    });
    try {
      const page = await context.newPage();
      await page.goto("/");
      const nav = page.getByRole("navigation", { name: t("app.nav.label") });
      await nav.getByRole("link", { name: t("app.nav.wall") }).click();
      await expect(page.getByRole("heading", { name: t("wall.index.title"), level: 1 })).toBeVisible();
      await page
        .getByRole("main")
        .getByRole("link", { name: labTitleIn(lab, language) })
        .click();
      await expect(page.getByRole("heading", { level: 1 })).toHaveText(
        `${t("wall.title")}: ${labTitleIn(lab, language)}`,
      );
      await expect(page.getByRole("heading", { name: t("announcements.form.title") })).toBeVisible();
      // From the wall to the student's own screen: a look over the shoulder, keyboard still hers.
      await page.getByRole("link", { name: t("wall.observe", { student: "alice" }) }).click();
      const observed = new ConsoleView(page, t);
      await expect(observed.region).toHaveAttribute("data-status", "connected");
      await expect.poll(() => observed.screenLines()).toEqual(await student.screenAtPrompt());
      await expect(observed.takeKeyboard).toBeVisible();
    } finally {
      await context.close();
    }
  });

  test(`an instructor's first minutes in ${language}: one row of navigation, then a lab graded with its checks' titles`, async ({
    browser,
    apiAs,
  }) => {
    const t = translator(language);
    const alice = await apiAs("alice");
    const lab = await alice.lab("git-workflow");
    await alice.launchRunning(lab.id);
    const ivan = await apiAs("ivan");
    const context = await browser.newContext({
      storageState: await ivan.request.storageState(),
      locale: browserLocales[language],
      viewport: { width: 1280, height: 800 },
    });
    try {
      const page = await context.newPage();
      await page.goto("/");
      const nav = page.getByRole("navigation", { name: t("app.nav.label") });
      await expect(nav.getByRole("link")).toHaveCount(9);
      const brand = await page.getByRole("link", { name: t("app.name"), exact: true }).boundingBox();
      const signOut = await page.getByRole("button", { name: t("auth.signOut") }).boundingBox();
      const lastPage = await nav.getByRole("link").last().boundingBox();
      if (!brand || !signOut || !lastPage) throw new Error("the header is not on screen");
      // One row: the last page and the sign-out button sit beside the name, not under it.
      for (const box of [signOut, lastPage]) expect(box.y).toBeLessThan(brand.y + brand.height);

      // Grading one lab (not linux-basics: grading.spec.ts needs it ungraded): the results name each
      // check by its title, in the page's language.
      await nav.getByRole("link", { name: t("app.nav.grading") }).click();
      await page
        .getByRole("main")
        .getByRole("link", { name: labTitleIn(lab, language) })
        .click();
      await page.getByRole("button", { name: t("grading.start.button") }).click();
      const results = page.getByRole("table", { name: t("grading.results.label") });
      await expect(results.getByRole("rowheader", { name: "alice" })).toBeVisible();
      for (const check of lab.checks) {
        const title =
          language === "en" ? check.title : (check.translations?.title?.[language] ?? check.title);
        await expect(results.getByRole("columnheader", { name: title })).toBeVisible();
      }
    } finally {
      await context.close();
    }
  });
}
