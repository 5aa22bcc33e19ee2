import { expect, test } from "./fixtures.ts";
import { ConsoleView } from "./pages/console-view.ts";

test("a TA replays a student's console recording: play, seek, speed and download", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launch(lab.id);
  await alice.waitUntilRunning(session.id);

  const student = new ConsoleView(await pageAs("alice"));
  await student.goto(session.id);
  await expect(student.region).toHaveAttribute("data-status", "connected");
  await student.typeLine("echo recorded''-for-replay");
  await expect(student.rows).toContainText("recorded-for-replay");

  const ta = await pageAs("tara");
  await ta.goto(`/recordings/${session.id}`);
  const player = ta.getByRole("region", { name: "Recording player" });
  const screen = player.getByTestId("recording-screen").locator(".xterm-rows");
  await player.getByRole("combobox").selectOption("8");
  await player.getByRole("button", { name: "Play" }).click();
  await expect(screen).toContainText("recorded-for-replay");
  await expect(player.getByRole("button", { name: "Play" })).toBeVisible();

  // Seeking to the start shows the screen as it was before anything was printed.
  await player.getByRole("slider").fill("0");
  await expect(screen).not.toContainText("recorded-for-replay");

  const download = ta.waitForEvent("download");
  await ta.getByRole("link", { name: "Download (.cast)" }).click();
  expect((await download).suggestedFilename()).toBe(`${session.id}.cast`);
});
