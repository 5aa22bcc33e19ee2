// Whether anything in the guest listens on a TCP port, asked of the guest's own kernel: its
// /proc/net/tcp and /proc/net/tcp6, read through qemu-guest-agent's guest-file-* commands.
//
// Why: port-forward goes through a QEMU user-network forward, and QEMU accepts on the host before it
// dials the guest, so a port where nothing listens is a connection that closes at once. virt-api
// dials the VMI's address itself and answers such a port with a 500 "connection refused" before it
// upgrades, and the BFF reads that as "the agent is still starting". Asking the kernel first gives
// the same answer for the same reason.
import type { AgentChannel } from "./agent-channel.ts";

/** The kernel's TCP_LISTEN, as /proc/net/tcp writes it in the `st` column. */
const listenState = "0A";
const tables = ["/proc/net/tcp", "/proc/net/tcp6"] as const;
const readCount = 64 * 1024;

/**
 * Whether one of these /proc/net/tcp(6) tables has a socket listening on `port` at an address the
 * guest's network reaches: any address, or one other than loopback (a server bound to 127.0.0.1 is
 * out of reach from outside, on KubeVirt as here).
 */
export function tablesListenOn(tableTexts: readonly string[], port: number): boolean {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  for (const text of tableTexts) {
    for (const line of text.split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== listenState) continue;
      const [address = "", localPort] = local.split(":");
      if (localPort === hexPort && !isLoopback(address)) return true;
    }
  }
  return false;
}

/** An address as /proc/net/tcp(6) writes it: the bytes in hex, in 32-bit words of host order. */
function isLoopback(hex: string): boolean {
  // IPv4 127.0.0.0/8: little-endian, so the first byte is the word's last.
  if (hex.length === 8) return hex.slice(6) === "7F";
  // IPv6 ::1, and ::ffff:127.x.y.z (an IPv4 loopback bound through a v6 socket).
  if (hex === "00000000000000000000000001000000") return true;
  return hex.startsWith("0000000000000000FFFF0000") && hex.slice(30) === "7F";
}

export async function guestListensOn(agent: AgentChannel, port: number): Promise<boolean> {
  const texts = await Promise.all(tables.map((path) => readGuestFile(agent, path)));
  return tablesListenOn(texts, port);
}

async function readGuestFile(agent: AgentChannel, path: string): Promise<string> {
  const handle = await agent.execute("guest-file-open", { path, mode: "r" });
  try {
    const chunks: Buffer[] = [];
    for (;;) {
      const answer = (await agent.execute("guest-file-read", { handle, count: readCount })) as {
        "buf-b64"?: string;
        eof?: boolean;
        count?: number;
      };
      chunks.push(Buffer.from(answer["buf-b64"] ?? "", "base64"));
      if (answer.eof || !answer.count) break;
    }
    return Buffer.concat(chunks).toString("utf8");
  } finally {
    await agent.execute("guest-file-close", { handle }).catch(() => undefined);
  }
}
