import { expect, test } from "./fixtures.ts";
import { HomePage } from "./pages/home-page.ts";

test("a student cannot see another student's session", async ({ apiAs, pageAs, lab }) => {
  const bobSession = await (await apiAs("bob")).launch(lab.id);

  const page = await pageAs("alice");
  const home = new HomePage(page);
  await home.goto();
  await expect(home.mySessions).toContainText("No sessions yet");
  await expect(home.mySessions.getByRole("article")).toHaveCount(0);

  await page.goto(`/sessions/${bobSession.id}`);
  await expect(page.getByRole("heading", { name: "Session not found" })).toBeVisible();
  await expect(page.getByRole("button", { name: "End session" })).toHaveCount(0);

  expect(await (await apiAs("alice")).sessionStatusCode(bobSession.id)).toBe(404);
});
