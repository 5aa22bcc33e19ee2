import { expect, test } from "./fixtures.ts";
import { ScreenRecordingPlayer } from "./pages/screen-recording-player.ts";
import { ScreenView } from "./pages/screen-view.ts";

// labs/screen-basics.yaml offers a screen: whatever is typed at its tty1 login prompt is recorded.
const screenLab = "screen-basics";

test("a TA finds a student's screen recording beside the console's and replays it on a canvas: play, seek", async ({
  apiAs,
  pageAs,
}) => {
  const session = await (await apiAs("alice")).launchRunning(screenLab);
  const screen = new ScreenView(await pageAs("alice"));
  await screen.goto(session.id);
  await screen.shows(":~$");
  await screen.type("typed-for-replay");
  await screen.shows(":~$ typed-for-replay");
  // The session page links to it beside the console's recording.
  await expect(screen.page.getByRole("link", { name: "Replay the screen recording" })).toHaveAttribute(
    "href",
    `/recordings/${session.id}?terminal=-1`,
  );

  const ta = await pageAs("tara");
  await ta.goto("/recordings?student=alice");
  const row = ta.getByRole("row").filter({ hasText: session.id }).filter({ hasText: "Screen" });
  await row.getByRole("link", { name: "Replay" }).click();
  await expect(ta.getByRole("heading", { name: "Screen recording", level: 1 })).toBeVisible();
  await expect(ta.getByRole("main")).toContainText("alice in");

  const player = new ScreenRecordingPlayer(ta);
  await player.play("8");
  await player.shows(":~$ typed-for-replay");
  // Its first keyframe: the screen before anything was typed.
  await player.seekToStart();
  await expect.poll(() => player.text()).not.toContain("typed-for-replay");
});
