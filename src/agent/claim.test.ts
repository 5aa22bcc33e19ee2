// A warm VM's claim (docs/agent.md, "Claims"), against src/agent/lab_agent/ as a real process and the
// BFF's own agent client over TCP: the session's key arrives sealed under the warm key, the answer is
// signed with the new one, and from then on the warm key opens nothing.
import { readFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAgentClient, type AgentClient } from "../server/agent/client.ts";
import { AgentUnverifiedError } from "../server/agent/errors.ts";
import { agentKey } from "../server/agent/key.ts";
import { createAgentFixture, type AgentFixture } from "./testing/agent-fixture.ts";
import { callAgent, startAgent, type AgentProcess } from "./testing/python-agent.ts";

const sessionKey = agentKey("a-secret-long-enough-for-agent-keys", "linux-basics-abcd1234");

let fixture: AgentFixture;
let agent: AgentProcess;
let client: AgentClient;

beforeEach(async () => {
  fixture = await createAgentFixture();
  agent = await startAgent({ keyFile: fixture.keyFile, user: fixture.user, home: fixture.home });
  const tcp = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = connect(agent.port, "127.0.0.1", () => resolve(socket));
      socket.once("error", reject);
    });
  client = createAgentClient({ connect: tcp, keyFor: () => sessionKey, warmKeyFor: () => fixture.key });
});

afterEach(async () => {
  await agent?.stop();
  await fixture?.remove();
});

describe("claiming a warm VM's agent", () => {
  it("takes the session's key: the warm key opens nothing after, the session's key everything", async () => {
    expect((await client.warmHealth("vm")).status).toBe("ok");
    await client.claim("vm");

    expect((await readFile(fixture.keyFile, "utf8")).trim()).toBe(sessionKey);
    expect((await callAgent(agent.port, fixture.key, "/v1/health")).status).toBe(401);
    expect((await client.health("vm")).status).toBe("ok");
    await expect(client.warmHealth("vm")).rejects.toBeInstanceOf(AgentUnverifiedError);
  });

  it("is claimed once: a second claim, signed with the warm key, is refused", async () => {
    await client.claim("vm");
    await expect(client.claim("vm")).rejects.toBeInstanceOf(AgentUnverifiedError);
    expect((await readFile(fixture.keyFile, "utf8")).trim()).toBe(sessionKey);
  });

  it("refuses a sealed key that is not one, and keeps the warm key", async () => {
    const answer = await callAgent(agent.port, fixture.key, "/v1/claim", { body: { key: "abc" } });
    expect(answer.status).toBe(400);
    expect(answer.verified).toBe(true);
    expect((await readFile(fixture.keyFile, "utf8")).trim()).toBe(fixture.key);
  });

  it("never hears the session's key in the clear: the request carries only its sealed form", async () => {
    // What a listener on the line would see: the sealed value is not the key, and differs per request.
    const seen: string[] = [];
    const spying = createAgentClient({
      connect: async () => {
        const socket = await new Promise<Socket>((resolve, reject) => {
          const opened = connect(agent.port, "127.0.0.1", () => resolve(opened));
          opened.once("error", reject);
        });
        const write = socket.write.bind(socket);
        socket.write = ((chunk: unknown, ...rest: never[]) => {
          seen.push(Buffer.from(chunk as Buffer).toString("latin1"));
          return write(chunk as Buffer, ...rest);
        }) as typeof socket.write;
        return socket;
      },
      keyFor: () => sessionKey,
      warmKeyFor: () => fixture.key,
    });
    await spying.claim("vm");
    expect(seen.join("")).toContain("/v1/claim");
    expect(seen.join("")).not.toContain(sessionKey);
  });
});
