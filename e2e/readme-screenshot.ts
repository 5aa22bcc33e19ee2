import { fileURLToPath } from "node:url";
import { expect, test } from "./fixtures.ts";
import { HomePage } from "./pages/home-page.ts";

test("README screenshot: a student's home with a running session", async ({ apiAs, pageAs, lab }) => {
  await (await apiAs("alice")).launch(lab.id);
  const page = await pageAs("alice");
  const home = new HomePage(page);
  await home.goto();
  await expect(home.sessionCard(lab.title)).toHaveAttribute("data-status", "running", { timeout: 60_000 });
  await page.screenshot({ path: fileURLToPath(new URL("../docs/screenshot.png", import.meta.url)) });
});
