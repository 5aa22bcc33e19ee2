import { expect, test } from "./fixtures.ts";
import { HomePage } from "./pages/home-page.ts";

test("a student cannot see another student's session", async ({ apiAs, pageAs, lab }) => {
  const bobSession = await (await apiAs("bob")).launch(lab.id);

  const page = await pageAs("alice");
  const home = new HomePage(page);
  await home.goto();
  await expect(home.mySessions).toContainText("No running sessions");
  await expect(home.mySessions.getByRole("article")).toHaveCount(0);

  await page.goto(`/sessions/${bobSession.id}`);
  await expect(page.getByRole("heading", { name: "Session not found" })).toBeVisible();
  await expect(page.getByRole("main")).toContainText("Your own sessions are on the labs page.");
  await expect(page.getByRole("button", { name: "End session" })).toHaveCount(0);

  expect(await (await apiAs("alice")).sessionStatusCode(bobSession.id)).toBe(404);
});

test("a TA of another section is told that, and where their sessions are, in a TA's words", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const aliceSession = await (await apiAs("alice")).launch(lab.id);
  const page = await pageAs("tom");
  await page.goto(`/sessions/${aliceSession.id}`);
  await expect(page.getByRole("heading", { name: "Session not found" })).toBeVisible();
  await expect(page.getByRole("main")).toContainText("it is not in a section you look after");
  await expect(page.getByRole("main")).not.toContainText("Your own sessions");
});
