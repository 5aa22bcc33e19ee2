// What a new session's VM receives so that it can be graded: checked on the user data the BFF
// really builds, with the real agent bundle.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAgent } from "../../../scripts/build-agent.ts";
import { agentToken } from "../../common/agent-token.ts";
import { defaultVmSizes, loadLabs } from "../labs/load-labs.ts";
import { buildSessionObjects, userDataKey } from "../sessions/vm-manifest.ts";
import { agentGuestPaths, createAgentDelivery } from "./agent-delivery.ts";

const secret = "a-secret-for-agent-delivery-tests-only";
const sessionId = "git-workflow-a1b2c3d4";
const labs = loadLabs(new URL("../../../labs", import.meta.url).pathname, defaultVmSizes).labs;
const lab = labs.find((each) => each.id === "git-workflow");

let dir: string;
let bundle: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "agent-delivery-"));
  await buildAgent(path.join(dir, "lab-agent.mjs"));
  bundle = await readFile(path.join(dir, "lab-agent.mjs"));
});

afterAll(() => rm(dir, { recursive: true, force: true }));

function objectsFor(withAgent: boolean) {
  if (!lab) throw new Error("labs/git-workflow.yaml is missing");
  const delivery = createAgentDelivery(bundle, (id) => agentToken(secret, id));
  return buildSessionObjects({
    sessionId,
    lab,
    owner: "alice",
    namespace: "lab-sessions",
    expiresAt: new Date("2030-01-01T10:00:00Z"),
    ...(withAgent ? { extraUserData: delivery(sessionId) } : {}),
  });
}

interface WriteFile {
  path: string;
  permissions?: string;
  defer?: boolean;
  encoding?: string;
  content: string;
}

function userDataOf(objects: ReturnType<typeof objectsFor>) {
  const text = Buffer.from(objects.userDataSecret.data?.[userDataKey] ?? "", "base64").toString("utf8");
  // cloud-init reads YAML 1.1.
  return { text, config: parse(text, { version: "1.1" }) as { write_files: WriteFile[]; runcmd: string[] } };
}

describe("delivering the grading agent at launch", () => {
  it("writes the session's own token, readable by its owner only", () => {
    const { config } = userDataOf(objectsFor(true));
    const token = config.write_files.find((file) => file.path === agentGuestPaths.token);
    expect(token).toMatchObject({ permissions: "0600", content: `${agentToken(secret, sessionId)}\n` });
    // Written after cloud-init created the student, so the home is theirs, not root's.
    expect(token?.defer).toBe(true);
    expect(token?.content).not.toContain(agentToken(secret, "git-workflow-zzzzzzzz"));
  });

  it("carries the agent file byte for byte, gzipped and base64-encoded", () => {
    const { config } = userDataOf(objectsFor(true));
    const file = config.write_files.find((each) => each.path === agentGuestPaths.bundle);
    expect(file).toMatchObject({ encoding: "gz+b64", permissions: "0755", defer: true });
    expect(gunzipSync(Buffer.from(file?.content ?? "", "base64")).equals(bundle)).toBe(true);
  });

  it("starts the agent in the background on 0.0.0.0:8099 after the lab's own boot commands", () => {
    const { config } = userDataOf(objectsFor(true));
    const start = config.runcmd.at(-1);
    expect(start).toMatch(/^nohup node \/home\/student\/\.lab-agent\/lab-agent\.mjs .*&$/);
    expect(start).toContain("--port 8099 --host 0.0.0.0");
    expect(start).toContain(`--token-file ${agentGuestPaths.token}`);
    // Ours and the lab's user data stay: the agent's part is merged in, not swapped in.
    expect(config.runcmd.slice(0, -1)).toEqual(userDataOf(objectsFor(false)).config.runcmd);
    expect(config.write_files.map((file) => file.path)).toContain("/etc/gitconfig");
  });

  it("leaves the VM as it was, and the Secret far below the 1 MiB limit", () => {
    const withAgent = objectsFor(true);
    expect(withAgent.virtualMachine).toEqual(objectsFor(false).virtualMachine);
    const secretBytes = Buffer.byteLength(JSON.stringify(withAgent.userDataSecret));
    expect(secretBytes).toBeLessThan(64 * 1024);
    expect(secretBytes).toBeGreaterThan(bundle.length / 4);
  });
});
