import type { LabSummary } from "../src/common/api.ts";
import { expect, test } from "./fixtures.ts";
import { CheckMyWorkPanel } from "./pages/check-my-work.ts";
import { ConsoleView } from "./pages/console-view.ts";
import { HomePage } from "./pages/home-page.ts";
import { timelineStep } from "./pages/session-card.ts";
import { SessionPage } from "./pages/session-page.ts";
import { SignInPage } from "./pages/sign-in-page.ts";
import { expectAccessible, expectNoUntranslatedText } from "./support/accessibility.ts";
import { browserLocales, labTitleIn, translator, type Language } from "./support/catalog.ts";

// The same student journey in each language the console speaks, chosen by the browser's language
// alone: sign in, launch, the console, "Check my work". At each step the page must be free of English
// UI text (in Japanese and Chinese) and of axe's WCAG 2.1 AA violations, in the light and dark theme.

function checkTitleIn(lab: LabSummary, checkId: string, language: Language): string {
  const check = lab.checks.find((each) => each.id === checkId);
  if (!check) throw new Error(`${lab.id} has no check ${checkId}`);
  return language === "en" ? check.title : (check.translations?.title?.[language] ?? check.title);
}

for (const language of ["en", "ja", "zh"] as const) {
  test(`a student's journey in ${language}: sign in, launch, console, check my work`, async ({
    browser,
    apiAs,
  }) => {
    const t = translator(language);
    const lab = await (await apiAs("alice")).lab("linux-basics");
    const labTitle = labTitleIn(lab, language);
    const context = await browser.newContext({ locale: browserLocales[language] });
    const page = await context.newPage();
    const checkPage = async (state: string) => {
      if (language !== "en") await expectNoUntranslatedText(page, language);
      await expectAccessible(page, `${language}: ${state}`);
    };

    try {
      const signIn = new SignInPage(page, t);
      await signIn.goto();
      await expect(signIn.heading).toBeVisible();
      await checkPage("sign-in");
      await signIn.signIn("alice", "wrong");
      await expect(page.getByRole("alert")).toHaveText(t("auth.signIn.wrongPassword"));
      await checkPage("sign-in refused");
      await signIn.signIn("alice");

      const home = new HomePage(page, t);
      await expect(home.heading).toBeVisible();
      await expect(home.currentUser).toContainText(t("roles.student"));
      await expect(home.mySessions).toContainText(t("sessions.mine.empty"));
      await checkPage("home");

      await home.launchButton(labTitle).click();
      const sessionPage = new SessionPage(page, t);
      await expect(sessionPage.heading).toBeVisible();
      const card = sessionPage.card(labTitle);
      await expect(card).toBeVisible();
      await checkPage("launching");
      await expect(card).toHaveAttribute("data-status", "running");
      await expect(timelineStep(card, "Running", t)).toHaveAttribute("data-state", "done");
      await expect(timelineStep(card, "Running", t)).toContainText(t("sessions.phase.Running"));
      await checkPage("timeline, running");

      // The lab's tasks in the page's language, each with its points.
      await expect(sessionPage.task(checkTitleIn(lab, "hello-file", language))).toContainText(
        t("labs.tasks.points", { count: 2 }),
      );
      const panel = new CheckMyWorkPanel(page, t);
      await expect(panel.region).toBeVisible();
      await new ConsoleView(page, t).run("echo hello > ~/hello.txt");
      await checkPage("console");

      await panel.button.click();
      await expect(panel.latest).toContainText(t("grading.result.score", { score: 2, count: 3 }));
      await expect(panel.latestCheck(checkTitleIn(lab, "hello-file", language))).toContainText(
        t("grading.check.passed"),
      );
      const notes = panel.latestCheck(checkTitleIn(lab, "notes-dir", language));
      await expect(notes).toContainText(t("grading.check.failed"));
      await expect(notes).toContainText(t("grading.outcome.exit", { code: 1 }));
      await checkPage("self-check results");

      // Ended, the session stays on the home page as a record with its last score.
      await sessionPage.endSession(labTitle);
      await expect(home.heading).toBeVisible();
      const past = home.pastSession(labTitle);
      await expect(past).toContainText(t("sessions.past.score", { score: 2, count: 3 }));
      await expect(past.getByRole("link", { name: t("sessions.past.recording") })).toBeVisible();
      await checkPage("home, a past session");
    } finally {
      await context.close();
    }
  });
}

test("the language switcher changes the page at once and is remembered", async ({ pageAs }) => {
  const page = await pageAs("alice");
  const home = new HomePage(page);
  await home.goto();
  await expect(home.heading).toBeVisible();
  await home.language.selectOption("ja");

  const japanese = new HomePage(page, translator("ja"));
  await expect(japanese.heading).toBeVisible();
  await expect(page.locator("html")).toHaveAttribute("lang", "ja");
  await page.reload();
  await expect(japanese.heading).toBeVisible();
  await japanese.language.selectOption("zh");
  await expect(new HomePage(page, translator("zh")).heading).toBeVisible();
  await expect(page.locator("html")).toHaveAttribute("lang", "zh-CN");
});
