// What a new session's VM receives so that it can be graded: checked on the user data the BFF
// really builds, with the real agent file.
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { gunzipSync } from "node:zlib";
import { agentKey } from "./key.ts";
import { defaultVmSizes, loadLabs } from "../labs/load-labs.ts";
import { buildSessionObjects, userDataKey } from "../sessions/vm-manifest.ts";
import { loadAgentFile } from "./agent-file.ts";
import { agentGuestPaths, agentNotStartedMarker, createAgentDelivery } from "./delivery.ts";

const secret = "a-secret-for-agent-delivery-tests-only";
const sessionId = "git-workflow-a1b2c3d4";
const labs = loadLabs(new URL("../../../labs", import.meta.url).pathname, defaultVmSizes).labs;
const lab = labs.find((each) => each.id === "git-workflow");

let agentFile: Buffer;

beforeAll(async () => {
  agentFile = await loadAgentFile();
});

function objectsFor(withAgent: boolean) {
  if (!lab) throw new Error("labs/git-workflow.yaml is missing");
  const delivery = createAgentDelivery(agentFile, (id) => agentKey(secret, id));
  return buildSessionObjects({
    sessionId,
    lab,
    owner: "alice",
    namespace: "lab-sessions",
    expiresAt: new Date("2030-01-01T10:00:00Z"),
    ...(withAgent ? { agentUserData: delivery(sessionId) } : {}),
  });
}

interface WriteFile {
  path: string;
  owner?: string;
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

function fileAt(filePath: string): WriteFile {
  const file = userDataOf(objectsFor(true)).config.write_files.find((each) => each.path === filePath);
  if (!file) throw new Error(`the user data writes no ${filePath}`);
  return file;
}

describe("delivering the grading agent at launch", () => {
  it("writes the session's own key where only root can read it, before any user exists", () => {
    const key = fileAt(agentGuestPaths.key);
    expect(key).toEqual({
      path: "/etc/lab-agent/key",
      owner: "root:root",
      permissions: "0600",
      content: `${agentKey(secret, sessionId)}\n`,
    });
    expect(key.content).not.toContain(agentKey(secret, "git-workflow-zzzzzzzz"));
  });

  it("carries lab_agent.pyz byte for byte, gzipped and base64-encoded, to a root-owned path", () => {
    const file = fileAt(agentGuestPaths.script);
    expect(file).toMatchObject({
      path: "/usr/local/lib/lab-agent/lab_agent.pyz",
      owner: "root:root",
      permissions: "0644",
      encoding: "gz+b64",
    });
    // Not deferred: a root path needs no student home, and nothing of the student's exists yet.
    expect(file.defer).toBeUndefined();
    expect(gunzipSync(Buffer.from(file.content, "base64")).equals(agentFile)).toBe(true);
    // A zip: its first entry's local header.
    expect(agentFile.subarray(0, 4).toString("latin1")).toBe("PK\x03\x04");
  });

  it("installs a systemd unit that starts the agent before the serial console's getty and restarts it", () => {
    const unit = fileAt(agentGuestPaths.unit);
    expect(unit).toMatchObject({ path: "/etc/systemd/system/lab-agent.service", owner: "root:root" });
    expect(unit.permissions).toBe("0644");
    expect(unit.defer).toBeUndefined();
    expect(unit.content).toBe(
      [
        "[Unit]",
        "Description=Lab Console grading agent",
        "Before=serial-getty@ttyS0.service",
        "StartLimitIntervalSec=0",
        "",
        "[Service]",
        "Type=notify",
        "ExecStart=/usr/bin/python3 -I -S /usr/local/lib/lab-agent/lab_agent.pyz",
        "Restart=always",
        "RestartSec=1",
        "OOMScoreAdjust=-900",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
      ].join("\n"),
    );
  });

  it("starts the agent first, then the lab's own boot commands, then the student's console", () => {
    const { config } = userDataOf(objectsFor(true));
    const labOnly = userDataOf(objectsFor(false)).config.runcmd;
    expect(labOnly.slice(-2)).toEqual([
      "systemctl daemon-reload",
      "systemctl restart serial-getty@ttyS0.service",
    ]);
    expect(config.runcmd).toEqual([
      `[ -x /usr/bin/python3 ] || echo "${agentNotStartedMarker} this image has no /usr/bin/python3, so its sessions cannot be graded"`,
      "systemctl daemon-reload",
      "systemctl enable --now lab-agent.service",
      ...labOnly.slice(0, -2),
      "systemctl restart serial-getty@ttyS0.service",
    ]);
    // Nothing else of the old delivery is left: no node, no student-owned folder, no nohup.
    expect(userDataOf(objectsFor(true)).text).not.toMatch(/node |\.lab-agent|nohup|8099/);
  });

  it("keeps ours and the lab's user data: the agent's part is merged in, not swapped in", () => {
    const { config } = userDataOf(objectsFor(true));
    expect(config.write_files.map((file) => file.path)).toEqual([
      "/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf",
      ...userDataOf(objectsFor(false))
        .config.write_files.map((file) => file.path)
        .slice(1),
      agentGuestPaths.script,
      agentGuestPaths.key,
      agentGuestPaths.unit,
    ]);
    expect(config.write_files.map((file) => file.path)).toContain("/etc/gitconfig");
  });

  it("leaves the VM as it was, and the Secret far below the 1 MiB limit", () => {
    const withAgent = objectsFor(true);
    expect(withAgent.virtualMachine).toEqual(objectsFor(false).virtualMachine);
    const secretBytes = Buffer.byteLength(JSON.stringify(withAgent.userDataSecret));
    expect(secretBytes).toBeLessThan(64 * 1024);
    expect(secretBytes).toBeGreaterThan(agentFile.length / 8);
  });
});
