import { formatTimeLeft } from "../src/web/lib/i18n/durations.ts";
import { expect, test } from "./fixtures.ts";
import { HomePage } from "./pages/home-page.ts";
import { SessionsPage } from "./pages/sessions-page.ts";
import { translator } from "./support/catalog.ts";

test("a student sees the time left on their session and extends it once", async ({ apiAs, pageAs, lab }) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);

  const page = await pageAs("alice");
  const home = new HomePage(page);
  await home.goto();
  const card = home.sessionCard(lab.title);
  await expect(card).toHaveAttribute("data-status", "running");
  const timeLeft = card.locator(".session-summary .duration").last();
  await expect(timeLeft).toHaveText(timeLeftPattern(session.expiresAt));
  await expect(card.getByTestId("extensions-used")).toHaveText(
    `0 of ${lab.session.maxExtensions} extensions used`,
  );

  await card.getByRole("button", { name: `Extend by ${lab.session.extendMinutes} min` }).click();
  await expect(card.getByTestId("extensions-used")).toHaveText(
    `1 of ${lab.session.maxExtensions} extensions used`,
  );
  const extended = (await alice.sessions()).find((entry) => entry.id === session.id);
  expect(Date.parse(extended?.expiresAt ?? "") - Date.parse(session.expiresAt)).toBe(
    lab.session.extendMinutes * 60_000,
  );
  await expect(timeLeft).toHaveText(timeLeftPattern(extended?.expiresAt ?? ""));
  // No warning while more than ten minutes are left.
  await expect(card.getByRole("alert")).toHaveCount(0);
});

test("a TA ends a student's session from the sessions page", async ({ apiAs, pageAs, lab }) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);

  const sessions = new SessionsPage(await pageAs("tara"));
  await sessions.goto();
  await sessions.rowsFor("alice").getByRole("link", { name: "alice" }).click();
  const page = sessions.page;
  await expect(page.getByRole("heading", { name: "Session", level: 1 })).toBeVisible();
  await page.getByRole("button", { name: "End session" }).click();
  const dialog = page.getByRole("dialog", { name: "End this session?" });
  await dialog.getByRole("button", { name: "End session" }).click();
  await expect(dialog).toBeHidden();

  await expect
    .poll(async () => (await alice.sessions()).find((entry) => entry.id === session.id)?.status ?? "gone")
    .toMatch(/^(stopping|gone)$/);
});

test("an instructor reads the doctor's checks and the audit log", async ({ apiAs, pageAs, lab }) => {
  const alice = await apiAs("alice");
  const session = await alice.launch(lab.id);
  const tara = await apiAs("tara");
  const ended = await tara.request.delete(`/api/sessions/${session.id}`, {
    headers: { "X-Lab-Console": "1" },
  });
  expect(ended.status()).toBe(202);

  const page = await pageAs("ivan");
  await page.goto("/");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Doctor" }).click();
  await expect(page.getByRole("heading", { name: "Doctor", level: 1 })).toBeVisible();
  const checks = page
    .getByRole("list", { name: "Checks" })
    .getByRole("listitem")
    .filter({ has: page.getByRole("heading", { level: 2 }) });
  await expect(checks).toHaveCount(9);
  const check = (title: RegExp) => checks.filter({ has: page.getByRole("heading", { name: title }) });
  await expect(check(/^Nodes with KVM$/)).toHaveAttribute("data-status", "ok");
  // The console runs as deploy/base's service account, even against the embedded emulator.
  await expect(check(/own permissions/)).toHaveAttribute("data-status", "ok");
  // The embedded emulator is KubeVirt 1.9 on Kubernetes 1.34 with ImageVolume disabled on the KubeVirt
  // side, as the field fixed its cluster: every check is green.
  const imageVolume = check(/^ImageVolume/);
  await expect(imageVolume).toHaveAttribute("data-status", "ok");
  await expect(imageVolume).toContainText("disabledFeatureGates");
  // Only the console's own page knows whether the cluster refused a warm VM's claim: none was refused.
  await expect(check(/^Warm VMs can be claimed$/)).toContainText("refused no claim");
  for (let index = 0; index < 9; index++) {
    await expect(checks.nth(index)).toHaveAttribute("data-status", "ok");
  }
  await expect(page.getByRole("table", { name: "Room per lab" })).toContainText(lab.title);

  // The checks' own texts in the reader's language, not only the page around them.
  const ja = translator("ja");
  await page.getByLabel(translator("en")("app.language"), { exact: true }).selectOption("ja");
  const checksInJapanese = page.getByRole("list", { name: ja("doctor.checks") }).getByRole("listitem");
  const kvmInJapanese = checksInJapanese.filter({
    has: page.getByRole("heading", { name: ja("doctor.texts.kvmTitle"), exact: true }),
  });
  await expect(kvmInJapanese).toHaveAttribute("data-status", "ok");
  await expect(kvmInJapanese).toContainText(
    ja("doctor.texts.kvmWith", { names: "" }).replace(/[\s。]+$/, ""),
  );
  await expect(checksInJapanese.filter({ hasText: ja("doctor.texts.warmPatchesOk") })).toHaveCount(1);
  await page.getByLabel(ja("app.language"), { exact: true }).selectOption("en");

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" }).click();
  await expect(page.getByRole("heading", { name: "Audit log", level: 1 })).toBeVisible();
  const sessionFilter = page.getByLabel("Session", { exact: true });
  await sessionFilter.fill(session.id);
  await sessionFilter.press("Enter");
  await expect(page).toHaveURL(new RegExp(`session=${session.id}`));
  const rows = page
    .getByRole("table", { name: "Audit log" })
    .getByRole("row")
    .filter({ has: page.getByRole("rowheader") });
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toContainText("tara");
  await expect(rows.nth(0)).toContainText("Ended");
  await expect(rows.nth(1)).toContainText("alice");
  await expect(rows.nth(1)).toContainText("Launched");
  await expect(page.getByRole("link", { name: "Export as JSON lines" })).toHaveAttribute(
    "href",
    `/api/audit/export?session=${session.id}`,
  );
});

/** The countdown for `expiresAt`, allowing for the minute that may tick over while the test looks. */
function timeLeftPattern(expiresAt: string): RegExp {
  const left = Date.parse(expiresAt) - Date.now();
  const options = [formatTimeLeft(left, "en"), formatTimeLeft(left - 60_000, "en")].map(
    (option) => option ?? "expired",
  );
  return new RegExp(
    `^(${options.map((option) => option.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})$`,
  );
}
