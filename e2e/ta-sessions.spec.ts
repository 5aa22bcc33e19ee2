import { expect, test } from "./fixtures.ts";
import { SessionsPage } from "./pages/sessions-page.ts";

test("a TA sees two students' sessions with counts and can filter them", async ({ apiAs, pageAs, lab }) => {
  const alice = await apiAs("alice");
  const bob = await apiAs("bob");
  const aliceSession = await alice.launch(lab.id);
  const bobSession = await bob.launch(lab.id);
  await alice.waitUntilRunning(aliceSession.id);
  await bob.waitUntilRunning(bobSession.id);

  const sessions = new SessionsPage(await pageAs("tara"));
  await sessions.goto();
  await expect(sessions.heading).toBeVisible();
  await expect(sessions.rowsFor("alice")).toHaveCount(1);
  await expect(sessions.rowsFor("bob")).toHaveCount(1);
  await expect(sessions.rowsFor("bob")).toContainText(lab.title);
  await expect(sessions.count("Total")).toHaveText("Total 2");
  await expect(sessions.count("Running")).toHaveText("Running 2");
  await expect(sessions.count("Starting")).toHaveText("Starting 0");

  await sessions.studentFilter.fill("bob");
  await expect(sessions.rowsFor("alice")).toHaveCount(0);
  await expect(sessions.rowsFor("bob")).toHaveCount(1);
  await expect(sessions.count("Total")).toHaveText("Total 1");
  await expect(sessions.page).toHaveURL(/student=bob/);

  await sessions.studentFilter.clear();
  await sessions.statusFilter.selectOption("failed");
  await expect(sessions.page.getByText("No sessions match these filters.")).toBeVisible();
  await expect(sessions.count("Total")).toHaveText("Total 0");
});
