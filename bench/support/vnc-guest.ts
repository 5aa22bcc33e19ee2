// The guest bench/vnc.ts measures: Debian under QEMU when this machine can run it, else the sandboxed
// guest (labelled so); where its screen's VNC socket is, and a shell on its serial console.
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureGuestImage } from "../../src/emulator/guests/qemu/image.ts";
import { findTool } from "../../src/emulator/guests/qemu/host-tools.ts";
import { accelerator } from "../../src/emulator/guests/qemu/qemu-command.ts";
import { qemuPidOf } from "../../src/emulator/guests/qemu/testing/qemu-process.ts";
import { realGuestsStateDir } from "../../src/emulator/guests/qemu/testing/real-guests.ts";
import type { TestEmulator } from "../../src/emulator/testing/start.ts";
import { openVmiWebSocket } from "../../src/server/kube/vmi-websocket.ts";
import { benchNamespace } from "./bench-cluster.ts";

export type Guests = "qemu" | "sandbox";

/** QEMU unless `asked` is "sandbox" or QEMU cannot run here. */
export async function chooseGuests(asked: string): Promise<{ guests: Guests; label: string }> {
  if (asked === "sandbox") {
    return { guests: "sandbox", label: "SANDBOXED GUEST (asked for with --guests sandbox), not QEMU" };
  }
  const qemu = findTool("qemu-system-x86_64");
  if (!qemu) {
    console.log(
      "  QEMU is not installed (apt-get install qemu-system-x86): falling back to the sandboxed guest",
    );
    return { guests: "sandbox", label: "SANDBOXED GUEST (no QEMU on this machine), not QEMU" };
  }
  try {
    await ensureGuestImage(realGuestsStateDir, (line) => console.log(`  ${line}`));
  } catch (error) {
    console.log(
      `  the QEMU guest image cannot be had (${(error as Error).message}): falling back to the sandboxed guest`,
    );
    return { guests: "sandbox", label: "SANDBOXED GUEST (no QEMU guest image), not QEMU" };
  }
  return { guests: "qemu", label: `Debian under QEMU (${accelLine()})` };
}

function accelLine(): string {
  return accelerator() === "kvm" ? "KVM" : "TCG: no usable KVM here";
}

/** QEMU's own VNC socket for this VMI (`-vnc unix:PATH` on its command line, qemu-command.ts). */
export function qemuVncSocket(sessionId: string): string {
  const pid = qemuPidOf(sessionId);
  if (pid === undefined) throw new Error(`no QEMU process for ${sessionId}`);
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  const value = argv[argv.indexOf("-vnc") + 1];
  if (!value?.startsWith("unix:")) throw new Error(`QEMU of ${sessionId} has no -vnc unix: socket`);
  return value.slice("unix:".length);
}

/** The sandboxed guest's screen socket (`<relay socket>-vnc`, guests/sandbox/guest.ts), found in the emulator's folder. */
export function sandboxVncSocket(root: string): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const at = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(at);
      else if (entry.name.endsWith("-vnc") && statSync(at).isSocket()) found.push(at);
    }
  };
  walk(root);
  if (found.length !== 1)
    throw new Error(`expected one sandboxed screen socket under ${root}, found ${found.length}`);
  return found[0]!;
}

/** The VM's serial console straight from the emulator (the admin's credentials, as virtctl): a shell line. */
export async function serialLine(emulator: TestEmulator, sessionId: string) {
  const socket = await openVmiWebSocket({
    kubeConfig: emulator.kubeConfig,
    namespace: benchNamespace,
    vmiName: sessionId,
    subresource: "console",
    options: { perMessageDeflate: false },
    signal: AbortSignal.timeout(30_000),
  });
  let tail = "";
  socket.on("message", (data: Buffer, isBinary) => {
    if (isBinary) tail = (tail + data.toString("latin1")).slice(-4096);
  });
  const send = (text: string) => socket.send(Buffer.from(text, "latin1"), { binary: true });
  return {
    send,
    /** Waits until the output since the last call ends with the shell's prompt, pressing Enter now and then. */
    async untilPrompt(timeoutMs: number): Promise<void> {
      tail = "";
      const deadline = Date.now() + timeoutMs;
      for (let attempt = 0; ; attempt += 1) {
        if (/student@[^\s]*:~\$ $/.test(tail)) return;
        if (Date.now() > deadline)
          throw new Error(
            `no shell prompt on the serial console; last output ${JSON.stringify(tail.slice(-200))}`,
          );
        if (attempt % 50 === 0) send("\r");
        await sleep(100);
      }
    },
    output: () => tail,
    close: () => socket.close(),
  };
}
