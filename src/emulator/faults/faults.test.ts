// The fault API, over HTTP and in-process, each fault observed the way a client would meet it.
import { request } from "node:https";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../cluster/objects.ts";
import type { Emulator } from "../emulator.ts";
import { vmManifest } from "../testing/manifests.ts";
import { jsonRequest, rawRequest } from "../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../testing/start.ts";
import { emulatorCa, openStream } from "../testing/websocket.ts";

const namespace = "lab-sessions";
const vmsPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`;
const vmisPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances`;
const consolePath = (name: string) =>
  `/apis/subresources.kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/${name}/console`;

let cluster: TestEmulator;
let emulator: Emulator;

const fault = (name: string, body: unknown = {}, token?: string) =>
  jsonRequest(emulator, "POST", `/emulator/faults/${name}`, body, token === undefined ? {} : { token });

interface Watch {
  events: { type: string; object: { code?: number } }[];
  /** "end" when the server ended the response, "error" when the connection broke. */
  ended: Promise<"end" | "error">;
}

function openWatch(path: string): Promise<Watch> {
  return new Promise((resolve, reject) => {
    const events: Watch["events"] = [];
    let settle: (how: "end" | "error") => void = () => undefined;
    const ended = new Promise<"end" | "error">((resolveEnded) => (settle = resolveEnded));
    const req = request(new URL(path, emulator.url), {
      ca: emulatorCa(emulator),
      agent: false,
      headers: { authorization: `Bearer ${emulator.adminToken}` },
    });
    req.on("response", (response) => {
      let buffered = "";
      response.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) if (line.trim()) events.push(JSON.parse(line) as Watch["events"][number]);
      });
      response.on("end", () => settle("end"));
      response.on("error", () => settle("error"));
      resolve({ events, ended });
    });
    req.on("error", (error) => {
      settle("error");
      reject(error);
    });
    req.end();
  });
}

async function vmi(name: string): Promise<KubeObject & { status?: { phase?: string } }> {
  const response = await jsonRequest(emulator, "GET", `${vmisPath}/${name}`);
  return response.json as KubeObject & { status?: { phase?: string } };
}

async function runningWithAgent(name: string): Promise<KubeObject> {
  return eventually(
    async () => {
      const current = (await vmi(name)) as KubeObject & {
        status?: { phase?: string; conditions?: { type: string }[] };
      };
      const agent = current.status?.conditions?.some((condition) => condition.type === "AgentConnected");
      return current.status?.phase === "Running" && agent ? current : undefined;
    },
    { what: `${name} to run` },
  );
}

beforeAll(async () => {
  cluster = await startTestEmulator({
    faults: true,
    guests: "sandbox",
    tokens: [{ token: "student-token", username: "student", groups: [] }],
  });
  emulator = cluster.emulator;
});

afterEach(() => emulator.faults.reset());

afterAll(async () => {
  await cluster?.close();
});

describe("the fault API", () => {
  it("is only for the admin token", async () => {
    expect((await fault("reset", {}, "nope")).status).toBe(401);
    const student = await fault("reset", {}, "student-token");
    expect(student.status).toBe(403);
    expect(student.json).toMatchObject({
      reason: "Forbidden",
      message: 'forbidden: User "student" cannot post path "/emulator/faults/reset"',
    });
    expect((await fault("reset")).status).toBe(200);
    expect((await fault("no-such-fault")).status).toBe(404);
    expect((await fault("constructor")).status).toBe(404);
    expect((await fault("fail-requests", { count: 1, status: 503 })).json).toMatchObject({
      code: 400,
      message: "status must be 500 or 429",
    });
    expect((await rawRequest(emulator, "GET", "/emulator/faults/reset")).status).toBe(405);
  });

  it("does not exist unless enabled", async () => {
    const plain = await startTestEmulator();
    try {
      const response = await jsonRequest(plain.emulator, "POST", "/emulator/faults/reset", {});
      expect(response.status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe("faults", () => {
  it("ends every open watch", async () => {
    const watch = await openWatch(`${vmsPath}?watch=true`);
    const ended = await fault("end-watches");
    expect((ended.json as { ended: number }).ended).toBeGreaterThanOrEqual(1);
    expect(await watch.ended).toBe("end");
  });

  it("compacts the history so that a watch from an older resourceVersion gets 410", async () => {
    const list = (await jsonRequest(emulator, "GET", vmsPath)).json as {
      metadata: { resourceVersion: string };
    };
    await jsonRequest(emulator, "POST", vmsPath, vmManifest("compact-vm", { runStrategy: "Halted" }));
    expect((await fault("compact-history")).status).toBe(200);
    const watch = await openWatch(`${vmsPath}?watch=true&resourceVersion=${list.metadata.resourceVersion}`);
    expect(await watch.ended).toBe("end");
    expect(watch.events).toEqual([
      { type: "ERROR", object: expect.objectContaining({ kind: "Status", reason: "Expired", code: 410 }) },
    ]);
  });

  it("fails the next requests with 500, then with 429 and Retry-After", async () => {
    await fault("fail-requests", { count: 2, status: 500 });
    for (let i = 0; i < 2; i++) {
      const failed = await rawRequest(emulator, "GET", "/api/v1/namespaces");
      expect(failed.status).toBe(500);
      expect(failed.json).toMatchObject({ kind: "Status", reason: "InternalError", code: 500 });
    }
    expect((await rawRequest(emulator, "GET", "/api/v1/namespaces")).status).toBe(200);

    emulator.faults.failRequests({ count: 1, status: 429, retryAfterSeconds: 3 });
    const throttled = await rawRequest(emulator, "GET", "/api/v1/namespaces");
    expect(throttled.status).toBe(429);
    expect(throttled.headers["retry-after"]).toBe("3");
    expect(throttled.text).toBe("Too many requests, please try again later.\n");
    expect((await rawRequest(emulator, "GET", "/api/v1/namespaces")).status).toBe(200);
  });

  it("fails websocket upgrades too", async () => {
    emulator.faults.failRequests({ count: 1, status: 500 });
    await expect(openStream(emulator, consolePath("anything"))).rejects.toMatchObject({ status: 500 });
  });

  it("delays responses", async () => {
    await fault("delay-responses", { ms: 600, count: 1 });
    const timed = async () => {
      const start = performance.now();
      expect((await rawRequest(emulator, "GET", "/api/v1/namespaces")).status).toBe(200);
      return performance.now() - start;
    };
    expect(await timed()).toBeGreaterThanOrEqual(600);
    expect(await timed()).toBeLessThan(600);
  });

  it("drops every connection and resets new ones while the server is down", async () => {
    const watch = await openWatch(`${vmsPath}?watch=true`);
    const dropped = await fault("drop-connections", { forMs: 500 });
    expect(dropped.status).toBe(200);
    expect((dropped.json as { dropped: number }).dropped).toBeGreaterThanOrEqual(1);
    expect(await watch.ended).toBe("error");
    await expect(rawRequest(emulator, "GET", "/api/v1/namespaces")).rejects.toMatchObject({
      code: "ECONNRESET",
    });
    const back = await eventually(
      async () => (await rawRequest(emulator, "GET", "/api/v1/namespaces")).status,
      {
        what: "the server to accept connections again",
      },
    );
    expect(back).toBe(200);
  });

  it("kills a guest: its console is cut and the VMI fails", async () => {
    await jsonRequest(emulator, "POST", vmsPath, vmManifest("doomed-vm", { runStrategy: "Once" }));
    await runningWithAgent("doomed-vm");
    const console = await openStream(emulator, consolePath("doomed-vm"));
    expect((await fault("kill-guest", { namespace, name: "doomed-vm" })).status).toBe(200);
    expect(await console.closed).toBe(1006);
    const failed = await eventually(async () => {
      const current = (await vmi("doomed-vm")) as KubeObject & {
        status?: { phase?: string; reason?: string };
      };
      return current.status?.phase === "Failed" ? current : undefined;
    });
    expect(failed.status?.reason).toBe("the guest was killed (emulator fault)");
    expect((await fault("kill-guest", { namespace, name: "doomed-vm" })).status).toBe(404);
  });

  it("kills the guest's processes that match, whoever owns them, and nothing else", async () => {
    const userData = "#cloud-config\nruncmd:\n  - nohup sleep 1001 >/dev/null 2>&1 &\n";
    await jsonRequest(emulator, "POST", vmsPath, vmManifest("oom-vm", { userData }));
    await runningWithAgent("oom-vm");
    // runcmd forks the sleep before the guest reports its agent; the exec may come a moment later.
    const killed = await eventually(async () => {
      const answer = await fault("kill-guest-processes", {
        namespace,
        name: "oom-vm",
        command: "sleep 1001",
      });
      return (answer.json as { killed?: number }).killed === 0 ? undefined : answer;
    });
    expect(killed.json).toEqual({ killed: 1 });
    const again = await fault("kill-guest-processes", { namespace, name: "oom-vm", command: "sleep 1001" });
    expect(again.json).toEqual({ killed: 0 });
    expect(((await vmi("oom-vm")) as { status?: { phase?: string } }).status?.phase).toBe("Running");
    expect((await fault("kill-guest-processes", { namespace, name: "oom-vm" })).status).toBe(400);
  });

  it("cuts a console without harming the guest", async () => {
    await jsonRequest(emulator, "POST", vmsPath, vmManifest("cut-vm"));
    const before = await runningWithAgent("cut-vm");
    const first = await openStream(emulator, consolePath("cut-vm"));
    expect(emulator.faults.cutConsole(namespace, "cut-vm")).toBe(true);
    expect(await first.closed).toBe(1006);
    expect((await fault("cut-console", { namespace, name: "cut-vm" })).status).toBe(404);

    const again = await openStream(emulator, consolePath("cut-vm"));
    again.send("echo back-$((4*5))\r");
    await again.waitFor(/\rback-20\r\n/);
    expect((await vmi("cut-vm")).metadata.uid).toBe(before.metadata.uid);
    again.ws.close();
  });
});
