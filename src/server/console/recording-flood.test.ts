// A console recording made while the guest floods its console, over real sockets: a browser's console
// (acking as the SPA does) -> BFF -> the emulator's KubeVirt console -> a bash in a sandboxed guest.
// The recording keeps output raw as it arrives and makes asciicast only as it stores it: played back,
// it must still be, byte for byte, what the browser received.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../common/testing/patience.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { eventsOf, outputOf } from "../recordings/testing/cast.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { launchRunning, startTestBff, type TestBff } from "../testing/test-bff.ts";
import { signInCookie } from "./testing/console-client.ts";
import { openRawConsole } from "./testing/raw-console.ts";

let emulator: TestEmulator;
let bff: TestBff;

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({ labs: [aLab({ id: "flood-rec" })], emulator });
});

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

/** Where `text` stops ending as `end` does, counted from the end and shown around; undefined if it does not. */
function whereEndDiffers(text: string, end: string): string | undefined {
  let back = 0;
  while (back < end.length && text.at(-1 - back) === end.at(-1 - back)) back += 1;
  if (back === end.length) return undefined;
  const around = (of: string) =>
    JSON.stringify(of.slice(Math.max(0, of.length - back - 40), of.length - back + 40));
  return `${back} characters from the end: ${around(text)} where ${around(end)}`;
}

// Colours, accents, a euro sign and wide characters between runs of base64 (78 columns, as `base64`
// prints them), and a line of 3-byte characters long enough that the recording's events cut it too,
// somewhere inside a character most likely, as the console's chunks do.
const flood = [
  "for i in $(seq 1 20); do",
  "printf '\\e[3%dmcouleur %d : été, naïve, 5 €, 日本語\\e[0m\\n' $((i % 8)) $i;",
  "seq $((i * 20000)) $((i * 20000 + 19999)) | base64 -w 78;",
  "done;",
  "printf '€%.0s' $(seq 1 200000); echo;",
  "echo flood-d''one",
].join(" ");

describe("a console recording made during a flood", () => {
  it("plays back byte for byte what the browser received, in time order", async () => {
    const sessionId = await launchRunning(await bff.signIn("alice"), "flood-rec");
    const console = await openRawConsole(bff.url, sessionId, await signInCookie(bff.url, "alice"));
    console.type(`${flood}\r`);
    await eventually(
      async () => console.live().toString("utf8"),
      (text) => text.includes("flood-done"),
      { what: "the end of the flood", timeoutMs: 120_000 },
    );
    // Never held or caught up: the one replay is the one it connected with.
    expect(console.replays()).toBe(1);
    expect(console.live().length).toBeGreaterThan(3_000_000);

    const tara = await bff.signIn("tara");
    // Once the recording ends as what was received so far (the prompt after the flood included).
    const download = await eventually(
      () => tara.get(`/api/sessions/${sessionId}/recording`),
      (answer) =>
        answer.status === 200 &&
        outputOf(String(answer.body)).endsWith(console.live().toString("utf8").slice(-200)),
      { what: "the recording to end as the browser's output", timeoutMs: 30_000 },
    );
    const cast = String(download.body);
    const recorded = outputOf(cast);
    const received = console.live().toString("utf8");
    expect(received).not.toContain("\ufffd");
    // What came before the browser's live output is the replay's part (the console log's first
    // screen): the recording holds it first, then exactly the live output.
    expect(whereEndDiffers(recorded, received)).toBeUndefined();
    expect(recorded.length - received.length).toBeLessThan(4_096);
    expect(received).toContain("couleur 20 : été, naïve, 5 €, 日本語");
    expect(received).toContain(`${"€".repeat(200_000)}\r\n`);
    const times = eventsOf(cast).map(([time]) => time);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    console.close();
  }, 180_000);
});
