// The port-forward transport (kube/portforward.ts under grading's explanations) against a stand-in for virt-api: HTTPS with the kubeconfig's CA and
// bearer token, KubeVirt's portforward path and subprotocol, raw bytes in binary websocket messages,
// forwarded to a real agent on loopback.
import { patient } from "../../common/testing/patience.ts";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { renderKubeconfig } from "../../emulator/cluster/kubeconfig.ts";
import { loadOrCreateServingMaterial } from "../../emulator/cluster/tls.ts";
import { createPortForwarder, type PortForwarder } from "../kube/portforward.ts";
import { createAgentClient, type AgentClient } from "./client.ts";
import { AgentUnreachableError } from "./errors.ts";
import { agentBootCommands } from "./delivery.ts";
import {
  createPortForwardTransport,
  notListeningReasons,
  type PortForwardTransportOptions,
} from "./portforward-transport.ts";
import { startLoopbackAgents, type LoopbackAgents } from "./testing/loopback-agents.ts";

const session = "linux-basics-pf000001";
/** Refuses its first two port-forwards, like a VM whose agent is still starting. */
const lateSession = "linux-basics-pf000002";
const attempts = new Map<string, number>();
const clusterToken = "cluster-admin-token-for-this-test";
const pathPattern =
  /^\/apis\/subresources\.kubevirt\.io\/v1\/namespaces\/lab-sessions\/virtualmachineinstances\/([^/]+)\/portforward\/899$/;

let dir: string;
let agents: LoopbackAgents;
let server: Server;
let forwarder: PortForwarder;
let client: AgentClient;
const seen: { url: string; protocol: string | undefined; binaryOnly: boolean }[] = [];

function refuse(socket: Socket, status: number, body: string, type = "application/json"): void {
  socket.end(
    `HTTP/1.1 ${status} Refused\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "portforward-"));
  agents = await startLoopbackAgents([session, lateSession]);
  const material = loadOrCreateServingMaterial(dir, "127.0.0.1");
  const websockets = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => (protocols.has("plain.kubevirt.io") ? "plain.kubevirt.io" : false),
  });
  server = createServer({ cert: material.certPem, key: material.keyPem });
  server.on("upgrade", (request, socket: Socket, head) => {
    const name = pathPattern.exec(request.url ?? "")?.[1] ?? "";
    attempts.set(name, (attempts.get(name) ?? 0) + 1);
    if (request.headers.authorization !== `Bearer ${clusterToken}`)
      return refuse(socket, 401, '{"message":"Unauthorized"}');
    if (name === "refusing-vm") return refuse(socket, 500, "dialing VM: connection refused", "text/plain");
    if (name === "unreachable-vm") return refuse(socket, 500, "dialing VM: no route to host", "text/plain");
    if (name === lateSession && (attempts.get(name) ?? 0) <= 2) {
      return refuse(
        socket,
        500,
        "dialing VM: dial tcp 10.0.0.9:899: connect: connection refused",
        "text/plain",
      );
    }
    if (name !== session && name !== lateSession) {
      return refuse(
        socket,
        404,
        JSON.stringify({
          kind: "Status",
          code: 404,
          message: `virtualmachineinstance.kubevirt.io "${name}" not found`,
        }),
      );
    }
    websockets.handleUpgrade(request, socket, head, async (websocket) => {
      const record = { url: request.url ?? "", protocol: websocket.protocol || undefined, binaryOnly: true };
      seen.push(record);
      const tcp = (await agents.connect(name, new AbortController().signal)) as Socket;
      // virt-api's keepalive: a client that stops answering pings is cut off.
      const pings = setInterval(() => websocket.ping(), 1000);
      websocket.on("message", (data: Buffer, isBinary) => {
        if (!isBinary) record.binaryOnly = false;
        tcp.write(data);
      });
      tcp.on("data", (data) => websocket.send(data, { binary: true }));
      tcp.on("close", () => websocket.close());
      tcp.on("error", () => websocket.terminate());
      websocket.on("close", () => {
        clearInterval(pings);
        tcp.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(
    renderKubeconfig({
      server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
      caCertPem: material.caCertPem,
      token: clusterToken,
    }),
  );
  forwarder = createPortForwarder(kubeConfig, "lab-sessions");
  client = clientWith({});
});

function clientWith(options: PortForwardTransportOptions): AgentClient {
  return createAgentClient({
    // The window for an agent to start is a real deadline for real attempts over the emulator's
    // websocket, each slower on a busy machine: it scales with the load.
    connect: createPortForwardTransport(forwarder, {
      agentStartMs: patient(400),
      retryEveryMs: 50,
      ...options,
    }),
    keyFor: agents.keyFor,
  });
}

/** What the boot log of a guest without python3 holds: cloud-init's output of our first runcmd. */
const noPythonLine =
  "lab-agent: not started: this image has no /usr/bin/python3, so its sessions cannot be graded";
const noPythonBootLog = [
  "[  OK  ] Started cloud-final.service - Execute cloud user/final scripts.",
  `[   41.372015] cloud-init[1022]: ${noPythonLine}`,
  "Fedora Linux 41 (Cloud Edition)",
];

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await agents.close();
  await rm(dir, { recursive: true, force: true });
});

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(AgentUnreachableError);
  return (error as Error).message;
}

describe("the port-forward transport", () => {
  it("carries agent requests over KubeVirt's portforward websocket, in binary messages", async () => {
    const results = await client.runChecks(session, [{ id: "hello", run: "echo hello", timeoutSeconds: 5 }]);
    expect(results[0]).toMatchObject({ id: "hello", exitCode: 0, output: "hello\n" });
    expect(seen.at(-1)).toEqual({
      url: `/apis/subresources.kubevirt.io/v1/namespaces/lab-sessions/virtualmachineinstances/${session}/portforward/899`,
      protocol: "plain.kubevirt.io",
      binaryOnly: true,
    });
  });

  it("opens one websocket per request", async () => {
    const before = seen.length;
    await client.health(session);
    await client.health(session);
    expect(seen.length - before).toBe(2);
  });

  it("explains a VM that has no instance", async () => {
    expect(await reasonOf(client.health("linux-basics-gone0000"))).toBe(
      'The VM linux-basics-gone0000 has no running instance to connect to: virtualmachineinstance.kubevirt.io "linux-basics-gone0000" not found.',
    );
  });

  it("tries again while nothing listens yet, as right after the VM booted", async () => {
    expect(await client.health(lateSession)).toMatchObject({ status: "ok" });
    expect(attempts.get(lateSession)).toBe(3);
  });

  it("says a guest where nothing listens on the agent's port is still starting it, after a short retry", async () => {
    const started = Date.now();
    const before = attempts.get("refusing-vm") ?? 0;
    expect(await reasonOf(client.health("refusing-vm"))).toBe(
      "Your VM is still starting its grading agent. Try again in a minute.",
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(Date.now() - started).toBeLessThan(patient(3000));
    // It tried again, and again: how many times fit in the window depends on the machine's load.
    expect((attempts.get("refusing-vm") ?? 0) - before).toBeGreaterThan(2);
  });

  it("says the image has no python3 when the boot log holds cloud-init's marker", async () => {
    const asked: string[] = [];
    const withLog = clientWith({
      readBootLog: async (sessionId) => {
        asked.push(sessionId);
        return noPythonBootLog;
      },
    });
    expect(agentBootCommands[0]).toBe(`[ -x /usr/bin/python3 ] || echo "${noPythonLine}"`);
    expect(await reasonOf(withLog.health("refusing-vm"))).toBe(notListeningReasons.noPython);
    expect(notListeningReasons.noPython).toBe(
      "This VM's image has no /usr/bin/python3, which the grading agent needs; ask the lab's author for an image that runs cloud-init.",
    );
    expect(asked).toEqual(["refusing-vm"]);
    // A boot log without the marker is a guest still on its way.
    const starting = clientWith({ readBootLog: async () => noPythonBootLog.filter((_, i) => i !== 1) });
    expect(await reasonOf(starting.health("refusing-vm"))).toBe(notListeningReasons.starting);
  });

  it("reads the boot log only when the port is refused, and says 'still starting' when it cannot", async () => {
    let reads = 0;
    const counting = clientWith({
      readBootLog: async () => {
        reads += 1;
        return noPythonBootLog;
      },
    });
    expect(await counting.health(session)).toMatchObject({ status: "ok" });
    expect(reads).toBe(0);
    const failing = clientWith({ readBootLog: () => Promise.reject(new Error("pods/log forbidden")) });
    expect(await reasonOf(failing.health("refusing-vm"))).toBe(notListeningReasons.starting);
    const started = Date.now();
    const hanging = clientWith({ readBootLog: () => new Promise(() => {}), bootLogTimeoutMs: 100 });
    expect(await reasonOf(hanging.health("refusing-vm"))).toBe(notListeningReasons.starting);
    expect(Date.now() - started).toBeLessThan(patient(2000));
  });

  it("passes on any other reason the guest gives for refusing", async () => {
    expect(await reasonOf(client.health("unreachable-vm"))).toBe(
      "The VM did not accept a connection to its grading agent: dialing VM: no route to host.",
    );
  });
});
