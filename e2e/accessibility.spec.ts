import { expect, test } from "./fixtures.ts";
import { ConsoleView } from "./pages/console-view.ts";
import { GradingPage } from "./pages/grading-page.ts";
import { SessionsPage } from "./pages/sessions-page.ts";
import { expectAccessible, expectNoUntranslatedText } from "./support/accessibility.ts";
import { translator } from "./support/catalog.ts";

// The staff's pages, with data on them, under axe's WCAG 2.1 AA rules in the light and dark theme.
// The students' pages (sign-in, home, the start-up timeline, console, "Check my work") are covered
// by language-journeys.spec.ts in all three languages.
// The class wall has its own check in class-wall.spec.ts.

// The grading run here is on the first lab (git-workflow): grading.spec.ts needs linux-basics ungraded.
test("the sessions list, grading, doctor, audit log and a missing page pass axe", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const alice = await apiAs("alice");
  await alice.launchRunning(lab.id);

  const sessions = new SessionsPage(await pageAs("tara"));
  await sessions.goto();
  await expect(sessions.rowsFor("alice")).toHaveCount(1);
  await expectAccessible(sessions.page, "sessions list");

  const page = await pageAs("ivan");
  const grading = new GradingPage(page);
  await grading.open(lab.title);
  await expectAccessible(page, "grading, no run yet");
  await grading.startButton.click();
  await expect(page.getByText("1 of 1 session graded.")).toBeVisible();
  const maxScore = lab.checks.reduce((sum, check) => sum + check.points, 0);
  await expect(grading.rowFor("alice")).toContainText(`0 / ${maxScore}`);
  await expectAccessible(page, "grading, a finished run");

  await page.goto("/admin/doctor");
  await expect(page.getByRole("table", { name: "Room per lab" })).toBeVisible();
  await expectAccessible(page, "doctor");
  await page.goto("/admin/audit");
  await expect(page.getByRole("table", { name: "Audit log" })).toBeVisible();
  await expectAccessible(page, "audit log");
  await page.goto("/no/such/page");
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  await expectAccessible(page, "not found");
});

test("the recordings list and a recording's player pass axe", async ({ apiAs, pageAs, lab }) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);
  const student = new ConsoleView(await pageAs("alice"));
  await student.goto(session.id);
  await student.run("echo on''-record");

  const page = await pageAs("tara");
  await page.goto("/recordings");
  const row = page
    .getByRole("table", { name: "Console recordings" })
    .getByRole("row")
    .filter({ hasText: session.id });
  await expect(row).toHaveCount(1);
  await expectAccessible(page, "recordings list");
  await row.getByRole("link", { name: "Replay" }).click();
  await expect(page.getByRole("button", { name: "Play" })).toBeVisible();
  await expectAccessible(page, "recording player");
});

test("staff pages, the class wall too, read in Japanese and Chinese", async ({ browser, apiAs }) => {
  const alice = await apiAs("alice");
  await alice.launchRunning("linux-basics");
  const ivan = await apiAs("ivan");
  for (const [language, locale] of [
    ["ja", "ja-JP"],
    ["zh", "zh-CN"],
  ] as const) {
    const t = translator(language);
    const context = await browser.newContext({ locale, storageState: await ivan.request.storageState() });
    const page = await context.newPage();
    try {
      await page.goto("/sessions");
      await expect(page.getByRole("table", { name: t("sessions.table.label") })).toContainText("alice");
      await expectNoUntranslatedText(page, language);
      await expectAccessible(page, `${language}: sessions list`);
      await page.goto("/grading/linux-basics");
      await expect(page.getByRole("button", { name: t("grading.start.button") })).toBeVisible();
      await expectNoUntranslatedText(page, language);
      await page.goto("/admin/audit");
      await expect(page.getByRole("table", { name: t("audit.table.label") })).toBeVisible();
      await expectNoUntranslatedText(page, language);
      await expectAccessible(page, `${language}: audit log`);
      await page.goto("/recordings");
      await expect(
        page
          .getByRole("table", { name: t("recordings.list.title") })
          .or(page.getByText(t("recordings.list.none"))),
      ).toBeVisible();
      await expectNoUntranslatedText(page, language);
      await expectAccessible(page, `${language}: recordings list`);
      await page.goto("/labs/linux-basics/wall");
      await expect(page.getByTestId("wall-state")).toHaveAttribute("data-state", "live");
      await expect(page.getByTestId("wall-tile")).toHaveCount(1);
      await expectNoUntranslatedText(page, language);
      await expectAccessible(page, `${language}: class wall`);
    } finally {
      await context.close();
    }
  }
});

test("the console offers xterm.js's screen reader mode, and remembers it", async ({ apiAs, pageAs, lab }) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);

  const terminal = new ConsoleView(await pageAs("alice"));
  await terminal.goto(session.id);
  const toggle = terminal.region.getByRole("button", { name: "Screen reader mode" });
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await expect(terminal.region.locator(".xterm-accessibility-tree")).toHaveCount(0);
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  await terminal.run("echo read''-aloud");
  // The accessible copy of the screen that screen readers read, beside the drawn one.
  await expect(terminal.region.locator(".xterm-accessibility-tree")).toContainText("read-aloud");
  await expectAccessible(terminal.page, "console in screen reader mode");

  await terminal.reload();
  await expect(terminal.region.getByRole("button", { name: "Screen reader mode" })).toHaveAttribute(
    "aria-pressed",
    "true",
  );
  await expect(terminal.region.locator(".xterm-accessibility-tree")).toContainText("read-aloud");
});
