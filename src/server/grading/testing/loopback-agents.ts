// Real grading agents (src/agent) on 127.0.0.1, one per session, each with its own home and the
// session's real token, and a transport that opens a TCP connection to the session's agent, as the
// cluster's port-forward would. For tests and the bench.
import { writeFile } from "node:fs/promises";
import { connect as connectTcp, type Socket } from "node:net";
import { agentToken } from "../../../common/agent-token.ts";
import { startAgentServer, type AgentServer } from "../../../agent/server.ts";
import { createAgentFixture, type AgentFixture } from "../../../agent/testing/agent-fixture.ts";
import type { ConnectToAgent } from "../agent-client.ts";

export interface LoopbackAgents {
  connect: ConnectToAgent;
  tokenFor(sessionId: string): string;
  /** The directory the session's checks run in. */
  home(sessionId: string): string;
  /** Kills the agent (its running checks too); connections are refused until start(). */
  stop(sessionId: string): Promise<void>;
  start(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

interface Guest {
  fixture: AgentFixture;
  server: AgentServer | null;
  /** The last port, kept after stop() so that connecting is refused like a VM without its agent. */
  port: number | null;
}

export async function startLoopbackAgents(sessionIds: readonly string[]): Promise<LoopbackAgents> {
  const secret = "a-secret-for-loopback-agents-only-in-tests";
  const tokenFor = (sessionId: string) => agentToken(secret, sessionId);
  const guests = new Map<string, Guest>();

  const guestOf = (sessionId: string): Guest => {
    const guest = guests.get(sessionId);
    if (!guest) throw new Error(`No loopback agent for session ${sessionId}.`);
    return guest;
  };

  const start = async (sessionId: string) => {
    const guest = guestOf(sessionId);
    if (guest.server) return;
    const { fixture } = guest;
    guest.server = await startAgentServer(
      {
        host: "127.0.0.1",
        port: 0,
        tokenFile: fixture.tokenFile,
        user: fixture.user,
        home: fixture.home,
        tty: "/dev/null",
      },
      () => {},
    );
    guest.port = guest.server.port;
  };

  try {
    for (const sessionId of sessionIds) {
      const fixture = await createAgentFixture();
      await writeFile(fixture.tokenFile, `${tokenFor(sessionId)}\n`, { mode: 0o600 });
      guests.set(sessionId, { fixture, server: null, port: null });
      await start(sessionId);
    }
  } catch (error) {
    await closeAll(guests);
    throw error;
  }

  return {
    tokenFor,
    home: (sessionId) => guestOf(sessionId).fixture.home,
    start,
    async stop(sessionId) {
      const guest = guestOf(sessionId);
      const server = guest.server;
      guest.server = null;
      await server?.close();
    },
    connect(sessionId, signal) {
      const port = guests.get(sessionId)?.port;
      if (port === undefined || port === null)
        return Promise.reject(new Error(`there is no VM for ${sessionId}`));
      return new Promise<Socket>((resolve, reject) => {
        const socket = connectTcp({ host: "127.0.0.1", port });
        const onAbort = () => {
          socket.destroy();
          reject(signal.reason);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        socket.once("connect", () => {
          signal.removeEventListener("abort", onAbort);
          resolve(socket);
        });
        socket.once("error", (error) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        });
      });
    },
    close: () => closeAll(guests),
  };
}

async function closeAll(guests: Map<string, Guest>): Promise<void> {
  await Promise.all(
    [...guests.values()].map(async (guest) => {
      await guest.server?.close();
      guest.server = null;
      await guest.fixture.remove();
    }),
  );
}
