import { expect, test } from "./fixtures.ts";
import { expectAccessible } from "./support/accessibility.ts";
import { ConsoleView } from "./pages/console-view.ts";
import { RecordingPlayer } from "./pages/recording-player.ts";
import { WallPage } from "./pages/wall-page.ts";

test("a TA watches three students on the class wall, answers a raised hand by observing, then replays a recording", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const students = await Promise.all((["alice", "bob", "carol"] as const).map((name) => apiAs(name)));
  const sessions = await Promise.all(students.map((student) => student.launch(lab.id)));
  await Promise.all(sessions.map((session, index) => students[index]!.waitUntilRunning(session.id)));
  const [aliceSession, bobSession] = sessions;

  const wall = new WallPage(await pageAs("tara"));
  await wall.goto(lab.id);
  await expect(wall.state).toHaveAttribute("data-state", "live");
  await expect(wall.tiles).toHaveCount(3);

  // Alice types in her console; her miniature shows it, the others' do not.
  const alice = new ConsoleView(await pageAs("alice"));
  await alice.goto(aliceSession!.id);
  await expect(alice.region).toHaveAttribute("data-status", "connected");
  await alice.typeLine("echo on''-the-wall");
  await expect(wall.screenOf(aliceSession!.id)).toContainText("on-the-wall");
  await expect(wall.screenOf(bobSession!.id)).not.toContainText("on-the-wall");

  // A hidden tab stops the stream; shown again, the wall is live at once.
  await wall.setVisibility("hidden");
  await expect(wall.state).toHaveAttribute("data-state", "paused");
  await alice.typeLine("echo while''-hidden");
  await wall.setVisibility("visible");
  await expect(wall.state).toHaveAttribute("data-state", "live");
  await expect(wall.screenOf(aliceSession!.id)).toContainText("while-hidden");

  // Bob asks for help on his session page; the wall shows his hand with the note.
  const bob = await pageAs("bob");
  await bob.goto(`/sessions/${encodeURIComponent(bobSession!.id)}`);
  await bob.getByLabel("What do you need help with? (optional)").fill("my script will not run");
  await bob.getByRole("button", { name: "Ask for help" }).click();
  await expect(bob.getByTestId("hand-badge")).toHaveText("✋ Hand raised");
  await expect(wall.tileOf(bobSession!.id)).toContainText("Hand raised");
  await expect(wall.tileOf(bobSession!.id)).toContainText("my script will not run");
  await expectAccessible(wall.page, "class wall with a raised hand");

  // The TA clicks the miniature, lands on Bob's console read-only, and acknowledges the hand.
  await wall.tileOf(bobSession!.id).click();
  const observer = new ConsoleView(wall.page);
  await expect(observer.region).toHaveAttribute("data-mode", "observe");
  await expect(observer.region).toHaveAttribute("data-status", "connected");
  await wall.page.getByRole("button", { name: "Acknowledge" }).click();
  await expect(wall.page.getByTestId("hand-badge")).toHaveText("✋ Answered by tara");
  await expect(bob.getByTestId("hand-badge")).toHaveText("✋ Answered by tara");

  // Afterwards the TA replays what Alice's console showed, found through the recordings list.
  const nav = wall.page.getByRole("navigation", { name: "Main" });
  await nav.getByRole("link", { name: "Recordings" }).click();
  const studentFilter = wall.page.getByLabel("Student", { exact: true });
  await studentFilter.fill("alice");
  await studentFilter.press("Enter");
  const recordings = wall.page.getByRole("table", { name: "Console recordings" });
  await recordings
    .getByRole("row")
    .filter({ hasText: aliceSession!.id })
    .getByRole("link", { name: "Replay" })
    .click();
  const player = new RecordingPlayer(wall.page);
  await player.play("8");
  await expect(player.screen).toContainText("on-the-wall");
});

test("a fourth class wall of one TA is refused, saying what to do, and opens once another closes", async ({
  pageAs,
  lab,
}) => {
  const walls: WallPage[] = [];
  for (let index = 0; index < 3; index++) {
    const wall = new WallPage(await pageAs("tom"));
    await wall.goto(lab.id);
    await expect(wall.state).toHaveAttribute("data-state", "live");
    walls.push(wall);
  }
  const fourth = new WallPage(await pageAs("tom"));
  await fourth.goto(lab.id);
  await expect(fourth.state).toHaveAttribute("data-state", "refused");
  await expect(fourth.state).toHaveText(
    "The class wall is open in as many of your windows as it may be: close one of them, then reload this page.",
  );
  await expectAccessible(fourth.page, "a refused class wall");

  await walls[0]!.page.close();
  await expect(async () => {
    await fourth.page.reload();
    await expect(fourth.state).toHaveAttribute("data-state", "live", { timeout: 2_000 });
  }).toPass();
});
