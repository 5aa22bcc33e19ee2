// Sections over real sockets against the emulator: a student's session is in their section (a label
// on its VM, `section` in the API), and a TA of another section finds nothing of it, not the session,
// nor its console, its raised hand or its recording (also once the session is gone), while a TA of
// the whole course and the instructor see everything. The demo users: alice in section "a", carol
// in "b", tom a TA of "b", tara a TA of the whole course.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, refusedStatus, signInCookie } from "../console/testing/console-client.ts";
import { labelKeys } from "../sessions/labels.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { launchRunning, startTestBff, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { adminCluster } from "./testing/cluster-sessions.ts";

const lab = aLab({ id: "lab-sections", title: "Sections" });

let emulator: TestEmulator;
let bff: TestBff;
let alice: TestBrowser;
let carol: TestBrowser;
let tara: TestBrowser;
let tom: TestBrowser;
let ivan: TestBrowser;
let inA: string;
let inB: string;

beforeAll(async () => {
  // Guests, for a console with output to record.
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({ labs: [lab], emulator });
  [alice, carol, tara, tom, ivan] = await Promise.all([
    bff.signIn("alice"),
    bff.signIn("carol"),
    bff.signIn("tara"),
    bff.signIn("tom"),
    bff.signIn("ivan"),
  ]);
  [inA, inB] = await Promise.all([launchRunning(alice, lab.id), launchRunning(carol, lab.id)]);
}, 60_000);

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

const idsIn = (answer: { body: { items: { id: string }[] } }) =>
  answer.body.items.map((session) => session.id).sort();

describe("sections", () => {
  it("put a student's session in their section, on its VM and in the API", async () => {
    expect((await alice.get(`/api/sessions/${inA}`)).body).toMatchObject({ owner: "alice", section: "a" });
    expect((await carol.get(`/api/sessions/${inB}`)).body).toMatchObject({ owner: "carol", section: "b" });
    const { items } = await adminCluster(emulator).virtualMachines.list();
    const vm = items.find((each) => each.metadata.name === inA);
    expect(vm?.metadata.labels?.[labelKeys.section]).toBe("a");
    // The VMI and the launcher pod carry it as well.
    expect(vm?.spec.template?.metadata?.labels?.[labelKeys.section]).toBe("a");
  });

  it("hide another section's sessions from a TA, in single reads and in lists", async () => {
    expect((await tom.get(`/api/sessions/${inA}`)).status).toBe(404);
    expect((await tom.get(`/api/sessions/${inB}`)).status).toBe(200);
    expect(idsIn(await tom.get(`/api/sessions?lab=${lab.id}`))).toEqual([inB]);
    expect((await tom.get(`/api/sessions?owner=alice`)).body.items).toEqual([]);
    for (const everything of [tara, ivan]) {
      expect(idsIn(await everything.get(`/api/sessions?lab=${lab.id}`))).toEqual([inA, inB].sort());
      expect((await everything.get(`/api/sessions/${inA}`)).status).toBe(200);
    }
    // The whole course's answer is not the TA's: its ETag does not stand for his list.
    const course = await tara.get(`/api/sessions?lab=${lab.id}`);
    const asTom = await tom.get(`/api/sessions?lab=${lab.id}`, {
      "if-none-match": course.headers.get("etag") ?? "",
    });
    expect(asTom.status).toBe(200);
    expect(idsIn(asTom)).toEqual([inB]);
  });

  it("refuse another section's console as if it did not exist, and open the TA's own section's", async () => {
    const cookie = await signInCookie(bff.url, "tom");
    expect(await refusedStatus(bff.url, inA, { cookie, mode: "observe" })).toBe(404);
    const own = await ConsoleTestClient.connect(bff.url, inB, { cookie, mode: "observe" });
    own.close();
  });

  it("let only the TAs who see a session answer its raised hand", async () => {
    expect((await alice.post(`/api/sessions/${inA}/help`, { note: "stuck" })).status).toBe(200);
    expect((await tom.post(`/api/sessions/${inA}/help/acknowledge`)).status).toBe(404);
    const answered = await tara.post(`/api/sessions/${inA}/help/acknowledge`);
    expect(answered.status).toBe(200);
    expect(answered.body.help).toMatchObject({ acknowledgedBy: "tara" });
  });

  it("keep a recording in its session's section, also once the session is gone", async () => {
    const console = await ConsoleTestClient.connect(bff.url, inA, {
      cookie: await signInCookie(bff.url, "alice"),
    });
    // Keystrokes before the VM's console is connected would go nowhere.
    await console.untilLive();
    console.type("echo rec''orded\r");
    await console.untilScreenShows("recorded", 20_000);
    console.close();
    await eventually(
      () => ivan.get(`/api/sessions/${inA}/recording`),
      (answer) => answer.status === 200 && String(answer.body).includes("recorded"),
      { what: "alice's recording", timeoutMs: 20_000 },
    );
    const recordingSeen = async (by: TestBrowser) => {
      const listed = await by.get(`/api/recordings?lab=${lab.id}`);
      return {
        download: (await by.get(`/api/sessions/${inA}/recording`)).status,
        listed: (listed.body.items as { sessionId: string }[]).some((item) => item.sessionId === inA),
      };
    };
    const seenBefore = [await recordingSeen(tom), await recordingSeen(tara)];

    expect((await alice.delete(`/api/sessions/${inA}`)).status).toBe(202);
    await eventually(
      () => ivan.get(`/api/sessions/${inA}`),
      (answer) => answer.status === 404,
      { what: "alice's session to be gone", timeoutMs: 20_000 },
    );
    const seenAfter = [await recordingSeen(tom), await recordingSeen(tara)];
    for (const [byTom, byTara] of [seenBefore, seenAfter]) {
      expect(byTom).toEqual({ download: 404, listed: false });
      expect(byTara).toEqual({ download: 200, listed: true });
    }
    const cast = (await ivan.get(`/api/sessions/${inA}/recording`)).body as string;
    expect(JSON.parse(cast.split("\n")[0] ?? "{}").lab_console).toMatchObject({
      owner: "alice",
      section: "a",
    });
  });
});
