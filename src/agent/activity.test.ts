// The agent's activity (docs/agent.md, "Activity"), against src/agent/lab_agent/ as a real process
// and the BFF's own client (server/agent/client.ts) over TCP: the CPU time of the student's
// processes grows while one of them works, and an agent older than 2.3.0 means "unknown".
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentClient, type AgentClient } from "../server/agent/client.ts";
import { createAgentFixture, type AgentFixture } from "./testing/agent-fixture.ts";
import { agentScript, copyAgent, startAgent, type AgentProcess } from "./testing/python-agent.ts";

let fixture: AgentFixture;
let agent: AgentProcess;
let client: AgentClient;

function clientFor(port: number): AgentClient {
  return createAgentClient({
    connect: async () =>
      new Promise((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => resolve(socket));
        socket.once("error", reject);
      }),
    keyFor: () => fixture.key,
  });
}

/** The checks' user: nobody as root (createAgentFixture), else this user, whom a spawn stays. */
function studentIds(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return { uid: 65534, gid: 65534 };
}

beforeAll(async () => {
  fixture = await createAgentFixture();
  agent = await startAgent({ keyFile: fixture.keyFile, user: fixture.user, home: fixture.home });
  client = clientFor(agent.port);
});

afterAll(async () => {
  await agent?.stop();
  await fixture?.remove();
});

describe("GET /v1/activity", () => {
  it("counts the CPU time a student's process uses", async () => {
    const before = await client.activity("s", undefined);
    expect(before).toMatchObject({ logins: expect.any(Array) });
    // Works for a while, then waits: its CPU time stays on it (exec keeps the process).
    const worker = spawn(
      "sh",
      ["-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; echo worked; exec sleep 30"],
      { ...studentIds(), stdio: ["ignore", "pipe", "ignore"] },
    );
    try {
      await new Promise<void>((resolve) => worker.stdout.on("data", () => resolve()));
      const after = await client.activity("s", undefined);
      expect(after?.processes).toBeGreaterThan(0);
      expect((after?.cpuSeconds ?? 0) - (before?.cpuSeconds ?? 0)).toBeGreaterThan(0.2);
    } finally {
      worker.kill("SIGKILL");
    }
  });

  it("is undefined from an agent older than 2.3.0, which answers it as any path it lacks", async () => {
    // The shipped agent without the route: what 2.2.0 answers, a signed 404 not_found.
    const route = '"/v1/activity": {"GET": self.activity},';
    const script = copyAgent(join(fixture.dir, "lab_agent_2_2"), (module, source) =>
      module === "agent.py" ? source.replace(route, "") : source,
    );
    expect(readFileSync(join(agentScript, "agent.py"), "utf8")).toContain(route);
    const old = await startAgent({
      keyFile: fixture.keyFile,
      user: fixture.user,
      home: fixture.home,
      script,
    });
    try {
      expect(await clientFor(old.port).activity("s", undefined)).toBeUndefined();
    } finally {
      await old.stop();
    }
  });
});
