// Brings the grading agent into every new session's VM with cloud-init (docs/agent.md, option B):
// the session's token, the agent file itself, and a boot command that starts it. Everything goes
// under the student's home: an emulated guest may write nowhere else, and a real one does not mind.
import { gzipSync } from "node:zlib";
import { agentDefaultPort } from "../../common/agent-protocol.ts";
import { renderCloudConfig } from "../labs/cloud-config.ts";
import { guestUsername } from "../sessions/vm-manifest.ts";

export const agentGuestDir = `/home/${guestUsername}/.lab-agent`;
export const agentGuestPaths = {
  bundle: `${agentGuestDir}/lab-agent.mjs`,
  token: `${agentGuestDir}/token`,
  log: `${agentGuestDir}/log`,
} as const;

/** The #cloud-config part that delivers and starts the agent in the session's VM. */
export type AgentUserData = (sessionId: string) => string;

export function createAgentDelivery(bundle: Buffer, tokenFor: (sessionId: string) => string): AgentUserData {
  // About a third of the file's size once gzipped; the whole user data must stay far below the
  // Secret's 1 MiB, and every session carries this copy.
  const packedBundle = gzipSync(bundle, { level: 9 }).toString("base64");
  // Real cloud-init runs runcmd as root with root's HOME: only absolute paths mean the same
  // everywhere. 0.0.0.0, because virt-api dials the VM's pod IP; the emulator's guests reach
  // 127.0.0.1, which it covers too.
  const start =
    `nohup node ${agentGuestPaths.bundle} --port ${agentDefaultPort} --host 0.0.0.0 ` +
    `--token-file ${agentGuestPaths.token} > ${agentGuestPaths.log} 2>&1 &`;
  // defer: cloud-init writes files before it creates users; a file under a home that does not exist
  // yet would create that home owned by root. Deferred files come after the users, before runcmd.
  return (sessionId) =>
    renderCloudConfig({
      write_files: [
        {
          path: agentGuestPaths.token,
          permissions: "0600",
          defer: true,
          content: `${tokenFor(sessionId)}\n`,
        },
        {
          path: agentGuestPaths.bundle,
          permissions: "0755",
          encoding: "gz+b64",
          defer: true,
          content: packedBundle,
        },
      ],
      runcmd: [start],
    });
}
