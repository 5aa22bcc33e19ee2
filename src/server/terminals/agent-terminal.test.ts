// The BFF's side of an agent terminal when the other side is not a working 2.2 agent: an older
// agent, something without the key, a port nobody listens on. Each becomes the notice the terminal
// waits or ends with; the working agent is src/agent/terminal.test.ts's.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { UpstreamRefusedError } from "../console/upstream.ts";
import { agentAnswerMac } from "../agent/signature.ts";
import { createTerminalOpener } from "./agent-terminal.ts";

const key = "the-session-key-for-these-tests";
const size = { cols: 80, rows: 24 };
let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

function nonceOf(request: IncomingMessage): string {
  return /nonce=([0-9a-f]{32})/.exec(request.headers.authorization ?? "")?.[1] ?? "";
}

/** An agent that answers every terminal with `answer`. */
async function agentAnswering(answer: (request: IncomingMessage, response: ServerResponse) => void) {
  server = createServer(answer);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return createTerminalOpener({
    connect: () =>
      new Promise<Socket>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => resolve(socket));
        socket.once("error", reject);
      }),
    keyFor: () => key,
  });
}

async function refusalOf(work: Promise<unknown>): Promise<UpstreamRefusedError> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof UpstreamRefusedError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

function signedJson(request: IncomingMessage, response: ServerResponse, status: number, body: unknown) {
  const text = Buffer.from(JSON.stringify(body));
  response.writeHead(status, {
    "content-type": "application/json",
    "lab-agent-mac": agentAnswerMac(key, nonceOf(request), status, text),
  });
  response.end(text);
}

describe("opening an agent terminal", () => {
  it("ends with 'relaunch' when the agent predates terminals (its signed 404)", async () => {
    const open = await agentAnswering((request, response) =>
      signedJson(request, response, 404, {
        error: { code: "not_found", message: "There is no /v1/terminal here." },
      }),
    );
    const refused = await refusalOf(open("session", size, AbortSignal.timeout(5_000)));
    expect(refused.notice.reason).toBe("terminal_agent_too_old");
    expect(refused.final).toBe(true);
  });

  it("waits and tries again while the agent has as many terminals open as it allows", async () => {
    const open = await agentAnswering((request, response) =>
      signedJson(request, response, 503, { error: { code: "too_many_terminals", message: "8 are open." } }),
    );
    const refused = await refusalOf(open("session", size, AbortSignal.timeout(5_000)));
    expect(refused.notice.reason).toBe("too_many_terminals");
    expect(refused.final).toBe(false);
  });

  it("waits and tries again when the answer is not signed (an agent still without its key)", async () => {
    const open = await agentAnswering((_request, response) => {
      response.writeHead(503, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { code: "no_key", message: "No key yet." } }));
    });
    const refused = await refusalOf(open("session", size, AbortSignal.timeout(5_000)));
    expect(refused.notice.reason).toBe("terminal_unreachable");
    expect(refused.final).toBe(false);
  });

  it("trusts no upgrade that is not signed with the session's key", async () => {
    const open = await agentAnswering(() => undefined);
    server!.on("upgrade", (_request: IncomingMessage, socket: Socket) => {
      socket.end(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: lab-agent-terminal\r\nConnection: Upgrade\r\n" +
          `Lab-Agent-MAC: ${"0".repeat(64)}\r\n\r\n`,
      );
    });
    const refused = await refusalOf(open("session", size, AbortSignal.timeout(5_000)));
    expect(refused.notice.reason).toBe("terminal_unproven");
    expect(refused.final).toBe(true);
  });

  it("ends the terminal, saying so, when its line drops: the agent hung its shell up", async () => {
    const open = await agentAnswering(() => undefined);
    server!.on("upgrade", (request: IncomingMessage, socket: Socket) => {
      const mac = agentAnswerMac(key, nonceOf(request), 101, Buffer.alloc(0));
      socket.end(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: lab-agent-terminal\r\nConnection: Upgrade\r\n" +
          `Lab-Agent-MAC: ${mac}\r\n\r\n`,
      );
    });
    const line = await open("session", size, AbortSignal.timeout(5_000));
    const ended = await new Promise<string>((resolve, reject) =>
      // Listened to only now, maybe after the drop: it is told all the same.
      line.listen({
        output: () => undefined,
        lost: () => reject(new Error("lost")),
        ended: (notice) => resolve(notice.reason),
      }),
    );
    expect(ended).toBe("terminal_dropped");
  });

  it("waits and tries again when the VM's port cannot be reached", async () => {
    const open = createTerminalOpener({
      connect: () => Promise.reject(new Error("connection refused")),
      keyFor: () => key,
    });
    const refused = await refusalOf(open("session", size, AbortSignal.timeout(5_000)));
    expect(refused.notice).toMatchObject({ reason: "terminal_unreachable" });
    expect(refused.notice.message).toContain("connection refused");
    expect(refused.final).toBe(false);
  });
});
