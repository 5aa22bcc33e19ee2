// One real guest, booted through the emulator as a VM the BFF would create: its console shows the
// autologin shell that the product's user data sets up, and that shell runs on Debian's kernel, under
// systemd, after cloud-init. Prints what it measured (boot to the login prompt, to the shell, to
// cloud-init done, QEMU's memory). The image is kept in .lab/real-guests between runs: only the
// first run builds it.
import { readdirSync, readFileSync } from "node:fs";
import { release as hostKernel } from "node:os";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vmManifest } from "../../testing/manifests.ts";
import { jsonRequest } from "../../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../../testing/start.ts";
import { openStream, type StreamClient } from "../../testing/websocket.ts";

const namespace = "lab-sessions";
const name = "real-vm";
const subresources = `/apis/subresources.kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/${name}`;
const stateDir = resolve(".lab/real-guests/emulator");
const bootMs = 600_000;

// The part of the BFF's user data (server/sessions/vm-manifest.ts) that makes the serial console a
// shell: the student, agetty's autologin drop-in, and getty restarted once cloud-init has written it.
const userData = `#cloud-config
users:
  - name: student
    shell: /bin/bash
    lock_passwd: true
write_files:
  - path: /etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf
    permissions: "0644"
    content: |
      [Service]
      ExecStart=
      ExecStart=-/sbin/agetty --autologin student --noclear --keep-baud 115200,57600,38400,9600 - $TERM
runcmd:
  - [systemctl, daemon-reload]
  - [systemctl, restart, serial-getty@ttyS0.service]
`;

let cluster: TestEmulator;
let console_: StreamClient;
const measured: Record<string, string> = {};
let createdAt = 0;
const sinceCreation = () => `${((Date.now() - createdAt) / 1000).toFixed(1)} s`;
let next = 0;

/**
 * Runs a command in the console's shell and gives back what it printed between two markers, each
 * typed split in two so that the echo of the typed line never matches.
 */
async function run(command: string, timeoutMs = 120_000): Promise<string> {
  const id = ++next;
  console_.clear();
  console_.send(`echo "<<"'sta''rt-${id}>>'; ${command}; echo "<<$?:"'do''ne-${id}>>'\r`);
  const text = await console_.waitFor(new RegExp(`<<(\\d+):done-${id}>>`), timeoutMs);
  const start = text.lastIndexOf(`<<start-${id}>>`) + `<<start-${id}>>`.length;
  return (
    text
      .slice(start, text.lastIndexOf("<<"))
      // eslint-disable-next-line no-control-regex -- bash's terminal escapes (ESC) are what is stripped
      .replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, "")
      .trim()
  );
}

/** QEMU's resident memory, found by the guest name on its command line. */
function qemuRssMiB(): number | undefined {
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmdline.includes("qemu-system") || !cmdline.includes(`guest=${name},`)) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      return rss ? Math.round(Number(rss) / 1024) : undefined;
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

beforeAll(async () => {
  cluster = await startTestEmulator({ guests: "qemu", stateDir });
  createdAt = Date.now();
  await jsonRequest(
    cluster.emulator,
    "POST",
    `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`,
    vmManifest(name, { userData, memory: "1Gi", cores: 2 }),
  );
  await eventually(
    async () => {
      const vmi = await jsonRequest(
        cluster.emulator,
        "GET",
        `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/${name}`,
      );
      return (vmi.json as { status?: { phase?: string } }).status?.phase === "Running" ? true : undefined;
    },
    {
      what: `${name} to be Running (the image is built first when missing)`,
      timeoutMs: bootMs,
      intervalMs: 500,
    },
  );
  measured["to Running (image ready)"] = sinceCreation();
  console_ = await openStream(cluster.emulator, `${subresources}/console`);
  await console_.waitFor(/login: /, bootMs);
  measured["to the first login: prompt"] = sinceCreation();
  await console_.waitFor(/student@real-vm:~\$ $/, bootMs);
  measured["to the autologin shell"] = sinceCreation();
}, 900_000);

afterAll(async () => {
  console.log(
    `real guest, measured from the VM's creation:\n${Object.entries(measured)
      .map(([what, value]) => `  ${what}: ${value}`)
      .join("\n")}`,
  );
  console_?.ws.close();
  await cluster?.close();
});

describe("a real guest under QEMU", () => {
  it("runs Debian's kernel, not the host's", async () => {
    const kernel = await run("uname -r");
    expect(kernel).toMatch(/^\d+\.\d+\.\d+-\d+-cloud-amd64$/);
    expect(kernel).not.toBe(hostKernel());
  });

  it("runs systemd as its init", async () => {
    expect(await run("cat /proc/1/comm")).toBe("systemd");
  });

  it("has run cloud-init to the end", async () => {
    const status = await run("cloud-init status --wait --long", bootMs);
    expect(status).toMatch(/status: done/);
    measured["to cloud-init done (or sooner)"] = sinceCreation();
  });

  it("reports its agent, whose answers come from the guest", async () => {
    const info = await eventually(
      async () => {
        const response = await jsonRequest(cluster.emulator, "GET", `${subresources}/guestosinfo`);
        return response.status === 200
          ? (response.json as { os: { kernelRelease: string; id: string } })
          : undefined;
      },
      { what: "guestosinfo to answer", timeoutMs: 120_000, intervalMs: 1000 },
    );
    expect(info.os.id).toBe("debian");
    expect(info.os.kernelRelease).not.toBe(hostKernel());
    measured["QEMU resident memory"] = `${qemuRssMiB() ?? "?"} MiB (guest memory 1 GiB)`;
  });
});
