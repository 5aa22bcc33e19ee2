import { expect, test } from "./fixtures.ts";
import { ConsoleView } from "./pages/console-view.ts";
import { RecordingPlayer } from "./pages/recording-player.ts";

test("a TA replays a student's console recording: play, seek, speed and download", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);

  const student = new ConsoleView(await pageAs("alice"));
  await student.goto(session.id);
  await expect(student.region).toHaveAttribute("data-status", "connected");
  await student.typeLine("echo recorded''-for-replay");
  await expect(student.rows).toContainText("recorded-for-replay");

  const ta = await pageAs("tara");
  await ta.goto(`/recordings/${session.id}`);
  // Whose console and which lab, not only a session id.
  await expect(ta.getByRole("main")).toContainText(`alice in ${lab.title}`);
  const player = new RecordingPlayer(ta);
  await player.play("8");
  await expect(player.screen).toContainText("recorded-for-replay");
  await expect(player.playButton).toBeVisible();

  // Seeking to the start shows the screen as it was before anything was printed.
  await player.seekToStart();
  await expect(player.screen).not.toContainText("recorded-for-replay");

  const download = ta.waitForEvent("download");
  await ta.getByRole("link", { name: "Download (.cast)" }).click();
  expect((await download).suggestedFilename()).toBe(`${session.id}.cast`);
});

test("a deleted session's recording is found on the recordings list; a student's list is their own", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  // Alice's and Bob's consoles are recorded, then Alice's session is deleted.
  const recorded: Record<"alice" | "bob", string> = { alice: "", bob: "" };
  for (const student of ["alice", "bob"] as const) {
    const api = await apiAs(student);
    const session = await api.launchRunning(lab.id);
    const console = new ConsoleView(await pageAs(student));
    await console.goto(session.id);
    await expect(console.region).toHaveAttribute("data-status", "connected");
    await console.typeLine(`echo listed''-for-${student}`);
    await expect(console.rows).toContainText(`listed-for-${student}`);
    recorded[student] = session.id;
  }
  const alice = await apiAs("alice");
  await alice.endAllSessions();
  expect(await alice.sessionStatusCode(recorded.alice)).toBe(404);

  const ta = await pageAs("tara");
  await ta.goto("/");
  await ta.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Recordings" }).click();
  await expect(ta.getByRole("heading", { name: "Console recordings", level: 1 })).toBeVisible();
  const table = ta.getByRole("table", { name: "Console recordings" });
  const row = (sessionId: string) => table.getByRole("row").filter({ hasText: sessionId });
  await expect(row(recorded.bob)).toHaveCount(1);

  await ta.getByLabel("Lab", { exact: true }).selectOption(lab.id);
  const studentFilter = ta.getByLabel("Student", { exact: true });
  await studentFilter.fill("alice");
  await studentFilter.press("Enter");
  await expect(ta).toHaveURL(new RegExp(`lab=${lab.id}`));
  await expect(ta).toHaveURL(/student=alice/);
  await expect(row(recorded.bob)).toHaveCount(0);
  const aliceRow = row(recorded.alice);
  await expect(aliceRow.getByRole("rowheader")).toHaveText("alice");
  await expect(aliceRow).toContainText(lab.title);
  await expect(aliceRow.getByRole("link", { name: "Download" })).toHaveAttribute(
    "href",
    `/api/sessions/${recorded.alice}/recording`,
  );
  await expect(aliceRow.getByRole("link", { name: "Download" })).toHaveAttribute(
    "download",
    `${recorded.alice}.cast`,
  );

  await aliceRow.getByRole("link", { name: "Replay" }).click();
  await expect(ta).toHaveURL(`/recordings/${recorded.alice}`);
  const player = new RecordingPlayer(ta);
  await player.play("8");
  await expect(player.screen).toContainText("listed-for-alice");
  await expect(ta.getByRole("link", { name: "Download (.cast)" })).toHaveAttribute(
    "href",
    `/api/sessions/${recorded.alice}/recording`,
  );
  await ta.getByRole("link", { name: "← All recordings" }).click();
  await expect(row(recorded.alice)).toHaveCount(1);

  // Bob's own list: his recording, not Alice's, even when the address asks for hers; no student filter.
  const student = await pageAs("bob");
  await student.goto("/recordings?student=alice");
  await expect(student.getByRole("heading", { name: "Your console recordings", level: 1 })).toBeVisible();
  const own = student.getByRole("table", { name: "Your console recordings" });
  await expect(own.getByRole("row").filter({ hasText: recorded.bob })).toHaveCount(1);
  await expect(own).not.toContainText(recorded.alice);
  await expect(own.getByRole("columnheader", { name: "Student" })).toHaveCount(0);
  await expect(student.getByLabel("Student", { exact: true })).toHaveCount(0);
});
