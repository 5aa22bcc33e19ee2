// Real lab agents (src/agent/lab_agent/) on 127.0.0.1, one process per session, each with its
// own home and the session's real key, and a transport that opens a TCP connection to the session's
// agent, as the cluster's port-forward would. For tests and the bench.
import { writeFile } from "node:fs/promises";
import { connect as connectTcp, type Socket } from "node:net";
import { agentKey } from "../key.ts";
import { createAgentFixture, type AgentFixture } from "../../../agent/testing/agent-fixture.ts";
import { startAgent, type AgentProcess } from "../../../agent/testing/python-agent.ts";
import type { ConnectToAgent } from "../client.ts";

export interface LoopbackAgents {
  connect: ConnectToAgent;
  keyFor(sessionId: string): string;
  /** The directory the session's checks run in. */
  home(sessionId: string): string;
  /** Kills the agent (its running checks too); connections are refused until start(). */
  stop(sessionId: string): Promise<void>;
  start(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

interface Guest {
  fixture: AgentFixture;
  agent: AgentProcess | null;
  /** The last port, kept after stop() so that connecting is refused like a VM without its agent. */
  port: number | null;
}

export async function startLoopbackAgents(sessionIds: readonly string[]): Promise<LoopbackAgents> {
  const secret = "a-secret-for-loopback-agents-only-in-tests";
  const keyFor = (sessionId: string) => agentKey(secret, sessionId);
  const guests = new Map<string, Guest>();

  const guestOf = (sessionId: string): Guest => {
    const guest = guests.get(sessionId);
    if (!guest) throw new Error(`No loopback agent for session ${sessionId}.`);
    return guest;
  };

  const start = async (sessionId: string) => {
    const guest = guestOf(sessionId);
    if (guest.agent) return;
    const { fixture } = guest;
    guest.agent = await startAgent({ keyFile: fixture.keyFile, user: fixture.user, home: fixture.home });
    guest.port = guest.agent.port;
  };

  try {
    for (const sessionId of sessionIds) {
      const fixture = await createAgentFixture();
      await writeFile(fixture.keyFile, `${keyFor(sessionId)}\n`, { mode: 0o600 });
      guests.set(sessionId, { fixture, agent: null, port: null });
      await start(sessionId);
    }
  } catch (error) {
    await closeAll(guests);
    throw error;
  }

  return {
    keyFor,
    home: (sessionId) => guestOf(sessionId).fixture.home,
    start,
    async stop(sessionId) {
      const guest = guestOf(sessionId);
      const agent = guest.agent;
      guest.agent = null;
      await agent?.stop();
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
      await guest.agent?.stop();
      guest.agent = null;
      await guest.fixture.remove();
    }),
  );
}
