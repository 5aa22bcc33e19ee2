// A fresh console's first screen from the serial console log, over real sockets: the emulator's
// sandboxed guest prints while nobody is attached, its launcher pod's guest-console-log keeps it,
// and the BFF (deploy/base's RBAC) reads that log's tail when the console opens again, then goes on
// live without showing any line twice or losing one at the seam.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonRequest, rawRequest } from "../../emulator/testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import {
  launchRunning,
  startTestBff,
  testNamespace,
  type TestBff,
  type TestBrowser,
} from "../testing/test-bff.ts";
import { ConsoleTestClient, signInCookie } from "./testing/console-client.ts";

const labs = ["lab-one", "lab-two", "lab-three"].map((id) => aLab({ id, title: id }));

let emulator: TestEmulator;
let bff: TestBff;
const clients: ConsoleTestClient[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  // A console closes soon after its last viewer left, so that the tests see it closed.
  bff = await startTestBff({ labs, emulator, consoleLimits: { lingerMs: 200 } });
});

afterAll(async () => {
  for (const client of clients) client.close();
  await bff?.close();
  await emulator?.close();
});

async function open(sessionId: string, who: string): Promise<ConsoleTestClient> {
  const client = await ConsoleTestClient.connect(bff.url, sessionId, {
    cookie: await signInCookie(bff.url, who),
  });
  clients.push(client);
  await client.untilLive();
  return client;
}

/** Leaves the console and waits until the BFF closed it: KubeVirt's console keeps nothing after. */
async function leave(client: ConsoleTestClient, sessionId: string): Promise<void> {
  client.close();
  await eventually(
    async () => bff.app.consoleHub.has(sessionId),
    (open) => !open,
    { what: "the console to close" },
  );
}

/** The guest's serial console log as the boot log route serves it. */
async function logLines(browser: TestBrowser, sessionId: string): Promise<string[]> {
  const answer = await browser.get(`/api/sessions/${sessionId}/boot-log`);
  expect(answer.status).toBe(200);
  return answer.body.lines as string[];
}

describe("a console opened again after it closed", () => {
  it("shows the last screen from the log, with what was printed meanwhile, nothing twice", async () => {
    const alice = await bff.signIn("alice");
    const sessionId = await launchRunning(alice, "lab-one");
    const first = await open(sessionId, "alice");
    // `echo a''b` prints "ab": the echoed command never matches the output.
    first.type("echo before''-leaving; (sleep 2; echo while''-away) &\r");
    await first.untilScreenShows("before-leaving");
    await leave(first, sessionId);
    // Printed after the console closed (after the prompt bash printed): only the log has it.
    const printedAway = (lines: string[]) => lines.some((line) => line.endsWith("while-away"));
    expect(printedAway(await logLines(alice, sessionId))).toBe(false);
    await eventually(() => logLines(alice, sessionId), printedAway, {
      what: "the guest to print while nobody is attached",
    });

    const again = await open(sessionId, "alice");
    expect(again.lastMessage("replay-begin")).toEqual({ type: "replay-begin", fresh: false });
    expect(again.lastMessage("replay-end")).toEqual({ type: "replay-end" });
    expect(again.rowsContaining("before-leaving")).toBe(1);
    expect(again.rowsContaining("while-away")).toBe(1);
    again.type("echo after''-coming-back\r");
    await again.untilScreenShows("after-coming-back");
    expect(again.rowsContaining("before-leaving")).toBe(1);
    expect(again.rowsContaining("while-away")).toBe(1);

    // A reload while the console is still open replays the same screen, seeded part included.
    again.close();
    const reloaded = await open(sessionId, "alice");
    expect(reloaded.rowsContaining("while-away")).toBe(1);
    expect(reloaded.rowsContaining("after-coming-back")).toBe(1);
  });

  it("shows each line printed across the seam exactly once: before, while the log is read, and after", async () => {
    const bob = await bff.signIn("bob");
    const sessionId = await launchRunning(bob, "lab-two");
    const first = await open(sessionId, "bob");
    const total = 400;
    // Numbered lines every 10 ms for about five seconds, from before the console opens again
    // until well after: some reach the screen only through the log, some both through the log
    // and live (printed after the line to the VM opened, before the log was read), some only live.
    first.type(
      `(sleep 1; for i in $(seq 1 ${total}); do echo seam-$i-end; sleep 0.01; done; echo seam''-done) &\r`,
    );
    await leave(first, sessionId);
    await eventually(
      () => logLines(bob, sessionId),
      // The first one follows the prompt bash printed after starting the loop.
      (lines) => lines.some((line) => line.endsWith("seam-1-end")),
      { what: "the numbered lines to start while nobody is attached" },
    );

    const again = await open(sessionId, "bob");
    const fromTheLog = again.screen();
    await again.untilScreenShows("seam-done", 30_000);
    // The seam fell inside the numbered lines: the log gave some, the live line the rest.
    expect(fromTheLog).toContain("seam-1-end");
    expect(fromTheLog).not.toContain(`seam-${total}-end`);
    const counts = Array.from({ length: total }, (_, index) => again.rowsContaining(`seam-${index + 1}-end`));
    expect(
      counts.every((count) => count === 1),
      `lines shown other than once: ${misses(counts)}`,
    ).toBe(true);
  });
});

describe("a console whose screen is still empty", () => {
  it("says why with a code (here: the VM's serial console log is off), until output arrives", async () => {
    const carol = await bff.signIn("carol");
    const sessionId = await launchRunning(carol, "lab-three");
    // As an administrator would: turn the VM's logging off; the restarted VMI's pod has no sidecar.
    const vmPath = `/apis/kubevirt.io/v1/namespaces/${testNamespace}/virtualmachines/${sessionId}`;
    const patched = await rawRequest(emulator.emulator, "PATCH", vmPath, {
      contentType: "application/merge-patch+json",
      body: JSON.stringify({
        spec: { template: { spec: { domain: { devices: { logSerialConsole: false } } } } },
      }),
    });
    expect(patched.status, patched.text).toBe(200);
    const restarted = await jsonRequest(
      emulator.emulator,
      "PUT",
      `/apis/subresources.kubevirt.io/v1/namespaces/${testNamespace}/virtualmachines/${sessionId}/restart`,
      {},
    );
    expect(restarted.status, restarted.text).toBe(202);
    await eventually(
      () => carol.get(`/api/sessions/${sessionId}/boot-log`),
      (got) => got.body?.logging === "off" && got.body?.lines.length === 0,
      { what: "the restarted VM to run without a serial console log", timeoutMs: 20_000 },
    );
    await eventually(
      () => carol.get(`/api/sessions/${sessionId}`),
      (got) => got.body?.status === "running",
      { what: "the restarted VM to run" },
    );
    const first = await open(sessionId, "carol");
    first.type("echo booted''-and-ready\r");
    await first.untilScreenShows("booted-and-ready");
    await leave(first, sessionId);
    // What the guest printed went with the console: without a log nothing can show it again.
    const quiet = await open(sessionId, "carol");
    expect(quiet.lastMessage("replay-end")).toEqual({ type: "replay-end", blank: "log-off" });
    expect(quiet.screen().trim()).toBe("");

    // Pressing Enter, as the hint says, brings the prompt; a viewer joining now gets no hint.
    quiet.type("\r");
    await quiet.until(() => quiet.screen().trim() !== "", "the prompt after Enter");
    const later = await open(sessionId, "carol");
    expect(later.lastMessage("replay-end")).toEqual({ type: "replay-end" });
  });
});

describe("the pod log API's byte limit, which keeps the seed bounded", () => {
  it("cuts the tail at exactly that many bytes, a UTF-8 character in two included, as the kubelet does", async () => {
    const tara = await bff.signIn("tara");
    const sessionId = await launchRunning(tara, "lab-one");
    const client = await open(sessionId, "tara");
    client.type("echo aé''é\r");
    await client.untilScreenShows("aéé");
    // After the bracketed-paste sequence bash prints before running the command.
    const isOurs = (line: string) => line.endsWith("aéé");
    const logged = await eventually(
      () => logLines(tara, sessionId),
      (lines) => lines.some(isOurs),
      { what: "the line in the log" },
    );
    const pods = await jsonRequest(
      emulator.emulator,
      "GET",
      `/api/v1/namespaces/${testNamespace}/pods?labelSelector=${encodeURIComponent(`vm.kubevirt.io/name=${sessionId}`)}`,
    );
    const podName = (pods.json as { items: { metadata: { name: string } }[] }).items[0]!.metadata.name;
    // From our line on, cut one byte into its last "é" (two bytes in UTF-8).
    const index = logged.findLastIndex(isOurs);
    const limit = Buffer.byteLength(logged[index]!) - 1;
    const cut = await rawRequest(
      emulator.emulator,
      "GET",
      `/api/v1/namespaces/${testNamespace}/pods/${podName}/log?container=guest-console-log&tailLines=${logged.length - index}&limitBytes=${limit}`,
    );
    expect(cut.status).toBe(200);
    expect(cut.headers["content-length"]).toBe(String(limit));
    expect(cut.text.endsWith("aé\uFFFD")).toBe(true);
  });
});

function misses(counts: number[]): string {
  return counts
    .map((count, index) => ({ line: index + 1, count }))
    .filter(({ count }) => count !== 1)
    .map(({ line, count }) => `seam-${line}: ${count}`)
    .join(", ");
}
