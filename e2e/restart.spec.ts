import { expect, test } from "./fixtures.ts";
import { ConsoleView } from "./pages/console-view.ts";

test("a student restarts the VM behind a warning; the open console follows the new VM", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);

  const console = new ConsoleView(await pageAs("alice"));
  await console.goto(session.id);
  await expect(console.region).toHaveAttribute("data-status", "connected");
  await console.typeLine("touch ~/unsaved && echo before''-restart");
  await expect(console.rows).toContainText("before-restart");

  await console.page.getByRole("button", { name: "Restart the VM" }).click();
  const dialog = console.page.getByRole("dialog", { name: "Restart the VM?" });
  await expect(dialog).toContainText("everything you did in it that is not saved elsewhere is lost");
  await dialog.getByRole("button", { name: "Restart the VM" }).click();
  await expect(dialog).toBeHidden();

  // The same console, without a reload, reaches the new VM: the old one's files are gone.
  await expect(console.region).toHaveAttribute("data-status", "connected");
  await expect(async () => {
    await console.typeLine("test -e ~/unsaved || echo gone''-after-restart");
    await expect(console.rows).toContainText("gone-after-restart", { timeout: 2_000 });
  }).toPass({ timeout: 30_000 });
});
