// Brings the lab agent into every new session's VM with cloud-init (docs/grading.md, "How the
// agent gets into each VM"): the agent file, the session's key and a systemd unit, all at paths only
// root may write, and boot commands that start the agent before the student's console does.
import { gzipSync } from "node:zlib";
import { renderCloudConfig } from "../labs/cloud-config.ts";

export const agentGuestPaths = {
  script: "/usr/local/lib/lab-agent/lab_agent.pyz",
  key: "/etc/lab-agent/key",
  unit: "/etc/systemd/system/lab-agent.service",
} as const;

export const agentUnitName = "lab-agent.service";

/**
 * What a guest without python3 prints on its serial console (cloud-init's output goes there), so
 * that the BFF can tell "this image cannot run the agent" from "still starting" in the boot log.
 */
export const agentNotStartedMarker = "lab-agent: not started:";

/** The #cloud-config part that delivers and starts the agent in the session's VM. */
export type AgentUserData = (sessionId: string) => string;

/**
 * Type=notify: `systemctl enable --now` returns once the agent listens, so the getty restart after
 * it (vm-manifest.ts) starts the student's shell with the agent already on its privileged port.
 * Ordered before the getty for the boots after the first too. Restart=always brings it back if it
 * dies, without systemd's default limit (5 starts in 10 s) that would leave it failed for good, and
 * the OOM killer picks other processes first. python3 -I (isolated): no PYTHON* variables, no user
 * site, no working folder on sys.path; -S: no site-packages and none of their .pth files, which
 * would run code in this root process. The agent imports its own root-owned zip and the standard
 * library only.
 */
const unitFile = [
  "[Unit]",
  "Description=Lab Console grading agent",
  "Before=serial-getty@ttyS0.service",
  "StartLimitIntervalSec=0",
  "",
  "[Service]",
  "Type=notify",
  `ExecStart=/usr/bin/python3 -I -S ${agentGuestPaths.script}`,
  "Restart=always",
  "RestartSec=1",
  "OOMScoreAdjust=-900",
  "",
  "[Install]",
  "WantedBy=multi-user.target",
  "",
].join("\n");

/**
 * The agent's boot commands. vm-manifest.ts runs them first, before the getty restart that starts
 * the student's autologin shell: no process of the student's exists before the agent listens.
 */
export const agentBootCommands = [
  `[ -x /usr/bin/python3 ] || echo "${agentNotStartedMarker} this image has no /usr/bin/python3, so its sessions cannot be graded"`,
  "systemctl daemon-reload",
  `systemctl enable --now ${agentUnitName}`,
] as const;

export function createAgentDelivery(agentFile: Buffer, keyFor: (sessionId: string) => string): AgentUserData {
  // About a third of the zip's size once gzipped; the whole user data must stay far below the
  // Secret's 1 MiB, and every session carries this copy.
  const packedAgent = gzipSync(agentFile, { level: 9 }).toString("base64");
  // Not deferred: these paths are root's, so they may be written before cloud-init creates the
  // student, and nothing of the student's can be there first.
  return (sessionId) =>
    renderCloudConfig({
      write_files: [
        {
          path: agentGuestPaths.script,
          owner: "root:root",
          // Read by python3, not executed; the student may read it, as a file helper runs it as them.
          permissions: "0644",
          encoding: "gz+b64",
          content: packedAgent,
        },
        {
          path: agentGuestPaths.key,
          owner: "root:root",
          permissions: "0600",
          content: `${keyFor(sessionId)}\n`,
        },
        { path: agentGuestPaths.unit, owner: "root:root", permissions: "0644", content: unitFile },
      ],
      runcmd: [...agentBootCommands],
    });
}
