// A VM's screen recorded while someone types: browser (RFB) -> BFF's screen hub -> the emulator's vnc
// subresource -> a sandboxed guest's tty1. The recording, fetched through the recording route as
// staff fetch it, draws back a screen whose pixels show what was typed; the same access rules as a
// console's recording hold.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../common/testing/patience.ts";
import { screenText } from "../../emulator/testing/screen-text.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { signInCookie } from "./testing/console-client.ts";
import { screenAt, screenEventsOf } from "../recordings/testing/screen-recording.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { launchRunning, startTestBff, type TestBff } from "../testing/test-bff.ts";
import { ScreenTestClient } from "../screen/testing/screen-client.ts";

const lab = aLab({
  id: "desktop-lab",
  title: "Desktop lab",
  session: {
    minutes: 60,
    extendMinutes: 15,
    maxExtensions: 2,
    terminals: 0,
    consoles: ["serial", "graphical"],
  },
});

let emulator: TestEmulator;
let bff: TestBff;
let sessionId: string;
let client: ScreenTestClient | undefined;

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({ labs: [lab], emulator });
  sessionId = await launchRunning(await bff.signIn("alice"), lab.id);
}, 60_000);

afterAll(async () => {
  client?.close();
  await bff?.close();
  await emulator?.close();
});

async function fetchRecording(
  who: string,
): Promise<{ status: number; type: string | null; file: string | null; body: string }> {
  const response = await fetch(`${bff.url}/api/sessions/${sessionId}/recording?terminal=-1`, {
    headers: { cookie: await signInCookie(bff.url, who) },
  });
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    file: response.headers.get("content-disposition"),
    body: await response.text(),
  };
}

describe("a screen recording through the BFF", () => {
  it("holds a frame showing what was typed, served to staff and the owner, listed beside the console's", async () => {
    client = await ScreenTestClient.connect(bff.url, sessionId, {
      cookie: await signInCookie(bff.url, "alice"),
    });
    await client.untilScreenShows(":~$", 40_000);
    client.type("typed-for-the-recording");
    await client.untilScreenShows(":~$ typed-for-the-recording");

    const recorded = await eventually(
      () => fetchRecording("tara"),
      (answer) =>
        answer.status === 200 &&
        screenText(screenAt(answer.body)).join("\n").includes("typed-for-the-recording"),
      { what: "a recorded frame showing the typed text" },
    );
    expect(recorded.type).toBe("application/x-ndjson");
    expect(recorded.file).toBe(`attachment; filename="${sessionId}--screen.jsonl"`);
    const events = screenEventsOf(recorded.body);
    expect(events[0]?.[1]).toBe("k");
    expect(events[0]?.slice(2, 6)).toEqual([0, 0, 720, 400]);
    // The keyframe alone is the screen before the name was typed.
    expect(screenText(screenAt(recorded.body, events[0]![0] as number)).join("\n")).not.toContain(
      "typed-for-the-recording",
    );

    expect((await fetchRecording("alice")).status).toBe(200);
    expect((await fetchRecording("bob")).status).toBe(404);
    const list = await fetch(`${bff.url}/api/recordings`, {
      headers: { cookie: await signInCookie(bff.url, "tara") },
    });
    const { items } = (await list.json()) as { items: { sessionId: string; terminal?: number }[] };
    expect(items).toContainEqual(expect.objectContaining({ sessionId, terminal: -1 }));
  });
});
