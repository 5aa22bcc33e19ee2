import { expect, test } from "./fixtures.ts";
import { HomePage } from "./pages/home-page.ts";
import { SessionPage } from "./pages/session-page.ts";
import { expectAccessible } from "./support/accessibility.ts";
import { translator } from "./support/catalog.ts";

const t = translator("en");

/** `<input type="datetime-local">`'s value for a moment, in the browser's own time zone. */
function localInput(date: Date): string {
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

test("an instructor schedules a class, a student's launch gets a VM booted ahead, and cancelling clears the pool", async ({
  pageAs,
}) => {
  const page = await pageAs("ivan");
  await page.goto("/");
  await page
    .getByRole("navigation", { name: t("app.nav.label") })
    .getByRole("link", { name: t("app.nav.classes") })
    .click();
  await expect(page.getByRole("heading", { name: t("classes.title"), level: 1 })).toBeVisible();

  const form = page.getByRole("region", { name: t("classes.schedule.title") });
  // Each field as wide as what it holds, not the page.
  for (const label of ["lab", "start", "end", "expected"] as const) {
    const box = await form.getByLabel(t(`classes.schedule.${label}`)).boundingBox();
    expect(box?.width, label).toBeLessThan((page.viewportSize()?.width ?? 0) / 2);
  }
  await form.getByLabel(t("classes.schedule.lab")).selectOption({ label: "Git workflow" });
  // Starting in two minutes: inside the lead time, so the pool boots at once.
  const start = new Date(Date.now() + 2 * 60_000);
  await form.getByLabel(t("classes.schedule.start")).fill(localInput(start));
  await form.getByLabel(t("classes.schedule.end")).fill(localInput(new Date(start.getTime() + 3_600_000)));
  await form.getByLabel(t("classes.schedule.expected")).fill("1");
  await form.getByRole("button", { name: t("classes.schedule.submit") }).click();
  await expect(form.getByText(t("classes.schedule.done"))).toBeVisible();

  const list = page.getByRole("table", { name: t("classes.list.title") });
  const row = list.getByRole("row").filter({ hasText: "Git workflow" });
  // Start and end to the minute alike; booting began when the class was scheduled, since its lead
  // time (15 minutes before the start) was already past.
  const end = new Date(start.getTime() + 3_600_000);
  const minute = (date: Date) => new Date(Math.floor(date.getTime() / 60_000) * 60_000);
  await expect(row).toContainText(
    t("classes.list.span", {
      start: new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" }).format(
        minute(start),
      ),
      end: new Intl.DateTimeFormat("en-US", { timeStyle: "short" }).format(minute(end)),
    }),
  );
  await expect(row).toContainText(t("classes.list.warmSince", { time: "" }).trim());
  await expect(row).not.toContainText(t("classes.list.warmFrom", { time: "" }).trim());
  // The pool's counts refresh by themselves: the warm VM boots, then its agent answers.
  await expect(row.locator('[data-ready="1"]')).toBeVisible({ timeout: 60_000 });
  await expectAccessible(page, "the classes page with a warm pool");

  const carol = new HomePage(await pageAs("carol"));
  await carol.goto();
  await carol.launchButton("Git workflow").click();
  const carolSession = new SessionPage(carol.page, t);
  await expect(carolSession.heading).toBeVisible();
  const card = carolSession.card("Git workflow");
  await expect(card.getByText(t("sessions.card.startedWarm"))).toBeVisible();
  await expect(card).toHaveAttribute("data-status", "running");

  await row.getByRole("button", { name: t("classes.list.cancel") }).click();
  await expect(page.getByText(t("classes.list.none"))).toBeVisible();
});
