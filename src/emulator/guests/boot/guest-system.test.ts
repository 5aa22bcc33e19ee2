// The grading agent's boot contract on real sandboxed guests: only the image's commands, cloud-init as
// guest root (root-owned files, packages failing without network), the emulated systemd (Type=notify,
// restarts, a missing ExecStart) and what the student cannot do. The "agent" is a tiny Python
// notify service standing in for the real one.
import { patiently } from "../../../common/testing/patience.ts";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGuest, type Guest } from "../sandbox/guest.ts";
import { guestImageFor, type ExtraImage } from "./images.ts";
import { runsPrivileged } from "../isolation/sandbox.ts";
import { contractUserData } from "../testing/boot-contract.ts";
import { runInConsole } from "../testing/console-command.ts";

const privileged = runsPrivileged();

// What guest root finds out about itself, written where the test reads it from the host.
const rootChecks = [
  "grep CapBnd /proc/self/status > /home/student/root-caps",
  "(echo x >> /usr/bin/ls) 2>/dev/null && echo wrote > /home/student/root-usr-bin || echo refused > /home/student/root-usr-bin",
  `(cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness) 2>/dev/null && echo wrote > /home/student/root-sysctl || echo refused > /home/student/root-sysctl`,
  "head -n 1 /etc/shadow | cut -d: -f1,2 > /home/student/root-shadow",
  // A unit that stop must end at once, with SIGTERM (with the default TimeoutStopSec the boot would hang 90 s).
  `printf '[Service]\\nExecStart=/bin/sleep 1000\\n' > /etc/systemd/system/nap.service; systemctl start nap; systemctl stop nap; echo "stop exited $? $(systemctl is-active nap)"`,
];

const noPythonImage: ExtraImage = {
  image: "registry.example/minimal:1",
  commands: ["bash", "sh", "ls", "cat", "echo", "test", "[", "id", "systemctl", "journalctl"],
};

let rootDir: string;
let fedora: Guest;
let ubuntu: Guest;
let minimal: Guest;

function booted(guest: Guest): Promise<Guest> {
  return new Promise((resolve) => {
    if (guest.agentConnected) resolve(guest);
    guest.on("agent", (connected) => connected && resolve(guest));
  });
}

beforeAll(async () => {
  rootDir = await mkdtemp(join(tmpdir(), "lab-guest-system-test-"));
  [fedora, ubuntu, minimal] = await Promise.all([
    startGuest({
      name: "fedora-vm",
      rootDir,
      image: guestImageFor("quay.io/containerdisks/fedora:41"),
      userData: contractUserData(rootChecks),
    }).then(booted),
    startGuest({
      name: "ubuntu-vm",
      rootDir,
      image: guestImageFor("quay.io/containerdisks/ubuntu:24.04"),
    }).then(booted),
    startGuest({
      name: "minimal-vm",
      rootDir,
      image: guestImageFor(noPythonImage.image, [noPythonImage]),
      userData: contractUserData(),
    }).then(booted),
  ]);
}, 30_000);

afterAll(async () => {
  await Promise.all([fedora?.kill(), ubuntu?.kill(), minimal?.kill()]);
  await rm(rootDir, { recursive: true, force: true });
});

const hostHas = (path: string) => {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
};

describe("a guest's commands are its image's", () => {
  it("Fedora has python3, bash, coreutils and systemctl, and neither node nor git", async () => {
    const { output } = await runInConsole(
      fedora,
      "for c in python3 bash ls systemctl node git; do command -v $c >/dev/null && echo has-$c || echo lacks-$c; done",
    );
    expect(output.trim().split("\n")).toEqual([
      "has-python3",
      "has-bash",
      "has-ls",
      "has-systemctl",
      "lacks-node",
      "lacks-git",
    ]);
    // Not even by its path: /usr/bin is the image's.
    expect((await runInConsole(fedora, "test -e /usr/bin/node")).status).toBe(1);
  });

  it.runIf(hostHas("/usr/bin/git"))("Ubuntu has git", async () => {
    const { output } = await runInConsole(ubuntu, "git --version");
    expect(output).toMatch(/^git version \d/);
  });

  it("gives the student's home the mode the image's useradd gives it", async () => {
    expect((await runInConsole(fedora, "stat -c %a ~")).output).toBe("700\n");
    expect((await runInConsole(ubuntu, "stat -c %a ~")).output).toBe("750\n");
  });

  it("has a /usr/local of its own, empty but for its skeleton, not the host's", async () => {
    expect(readdirSync("/usr/local")).not.toEqual([]);
    const { output } = await runInConsole(ubuntu, "ls -A /usr/local/bin; ls -1 /usr/local | tr '\\n' ' '");
    expect(output).toBe("bin etc games include lib libexec sbin share src ");
  });

  it("hides the host's shadow behind the guest's own, which the student cannot read", async () => {
    expect(await readFile(join(fedora.homeDir, "root-shadow"), "utf8")).toBe("root:!*\n");
    const { output, status } = await runInConsole(fedora, "cat /etc/shadow /etc/gshadow");
    expect(status).toBe(1);
    expect(output).toContain("cat: /etc/shadow: Permission denied");
    expect(output).toContain("cat: /etc/gshadow: Permission denied");
  });

  it("an image without python3 has none, says so on the console, and its agent fails as 203/EXEC", async () => {
    expect((await runInConsole(minimal, "test -e /usr/bin/python3")).status).toBe(1);
    const log = minimal.consoleLogLines();
    expect(log).toContain(
      "lab-agent: not started: this image has no /usr/bin/python3, so its sessions cannot be graded",
    );
    expect(log).toContain("[FAILED] Failed to start lab-agent.service - Lab Console grading agent.");
    const { output } = await runInConsole(
      minimal,
      "systemctl show -p ExecMainStatus,Result --value lab-agent.service",
    );
    expect(output.trim().split("\n")).toEqual(["203", "exit-code"]);
  });
});

describe("cloud-init in a guest", () => {
  it("fails packages: as without network, visibly in the boot log", () => {
    const log = fedora.consoleLogLines();
    expect(log.some((line) => line.endsWith("Failure when attempting to install packages: ['git']"))).toBe(
      true,
    );
    expect(log).toContainEqual(
      expect.stringMatching(
        /^cloud-init: packages: dnf could not reach its repositories .*this guest has no network/,
      ),
    );
    // The guest boots on, as a real one does after a cloud-init module failed.
    expect(log.indexOf("cloud-init: finished")).toBeGreaterThan(
      log.findIndex((line) => line.includes("Failure when attempting to install packages")),
    );
  });

  it("writes root-owned files that the student can neither read (0600) nor change", async () => {
    const { output } = await runInConsole(
      fedora,
      "stat -c '%U:%G %a %n' /etc/lab-agent/key /usr/local/lib/lab-agent/lab_agent.py /etc/gitconfig",
    );
    const owner = privileged ? "root:root" : "student:student";
    expect(output.trim().split("\n")).toEqual([
      `${owner} 600 /etc/lab-agent/key`,
      `${owner} 755 /usr/local/lib/lab-agent/lab_agent.py`,
      `${owner} 644 /etc/gitconfig`,
    ]);
    expect((await runInConsole(fedora, "cat /etc/gitconfig")).output).toBe(
      "[init]\n    defaultBranch = main\n",
    );
    if (!privileged) return; // one uid: the student is guest root too
    const attempts = await runInConsole(
      fedora,
      "cat /etc/lab-agent/key; echo x >> /etc/gitconfig; rm -f /usr/local/lib/lab-agent/lab_agent.py; touch /etc/new-file",
    );
    expect(attempts.output).toContain("cat: /etc/lab-agent/key: Permission denied");
    expect(attempts.output).toContain("/etc/gitconfig: Permission denied");
    expect(attempts.output).toContain(
      "cannot remove '/usr/local/lib/lab-agent/lab_agent.py': Permission denied",
    );
    expect(attempts.output).toContain("cannot touch '/etc/new-file': Permission denied");
  });

  it("runs runcmd as guest root, which cannot write the host's binaries or kernel settings", async () => {
    expect(await readFile(join(fedora.homeDir, "root-usr-bin"), "utf8")).toBe("refused\n");
    expect(await readFile(join(fedora.homeDir, "root-sysctl"), "utf8")).toBe("refused\n");
    if (!privileged) return;
    // SETUID SETGID NET_BIND_SERVICE KILL DAC_OVERRIDE CHOWN FOWNER, and nothing else.
    const bits = [6, 7, 10, 5, 1, 0, 3].reduce((mask, bit) => mask | (1n << BigInt(bit)), 0n);
    expect(await readFile(join(fedora.homeDir, "root-caps"), "utf8")).toBe(
      `CapBnd:\t${bits.toString(16).padStart(16, "0")}\n`,
    );
  });
});

describe("the emulated systemd", () => {
  it("returns from enable --now of a Type=notify unit once the unit sent READY=1", () => {
    const log = fedora.consoleLogLines();
    expect(log).toContain("enable exited 0 ready-sent=yes");
    expect(log).toContain("[  OK  ] Started lab-agent.service - Lab Console grading agent.");
    expect(log.indexOf("[  OK  ] Started lab-agent.service - Lab Console grading agent.")).toBeLessThan(
      log.indexOf("enable exited 0 ready-sent=yes"),
    );
  });

  it("runs the unit as guest root, reachable through port-forward on port 899", async () => {
    const socket = await fedora.connect(899);
    const answer = await new Promise<string>((resolve) => {
      let text = "";
      socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
      socket.on("end", () => resolve(text));
    });
    expect(answer).toBe(`uid=${privileged ? 0 : 1000} key=64\n`);
  });

  it("fails a unit whose ExecStart does not exist, with systemd's words on the console", async () => {
    const log = fedora.consoleLogLines();
    expect(log).toContain("[FAILED] Failed to start missing.service - Needs a binary the image lacks.");
    expect(log).toContain(
      "Job for missing.service failed because the control process exited with error code.",
    );
    expect(log).toContain("missing exited 1");
    const { output } = await runInConsole(
      fedora,
      "systemctl show -p ActiveState,ExecMainStatus --value missing",
    );
    expect(output.trim().split("\n")).toEqual(["203", "failed"]);
  });

  it("stops a unit with SIGTERM, without restarting it", () => {
    expect(fedora.consoleLogLines()).toContain("stop exited 0 inactive");
  });

  it("restarts the unit after its process is killed", async () => {
    const [pid] = processesWithArgument("/usr/local/lib/lab-agent/lab_agent.py", "fedora-vm");
    expect(pid).toBeDefined();
    process.kill(pid ?? 0, "SIGKILL");
    await vi.waitFor(
      async () => {
        const { output } = await runInConsole(
          fedora,
          "systemctl show -p NRestarts,ActiveState --value lab-agent",
        );
        expect(output.trim().split("\n")).toEqual(["1", "active"]);
      },
      patiently(10_000, 200),
    );
    const [next] = processesWithArgument("/usr/local/lib/lab-agent/lab_agent.py", "fedora-vm");
    expect(next).not.toBe(pid);
    const socket = await fedora.connect(899);
    socket.destroy();
  });

  it.runIf(privileged)("keeps the student from root's units, processes and low ports", async () => {
    const stop = await runInConsole(fedora, "systemctl stop lab-agent");
    expect(stop).toEqual({ output: "Failed to stop lab-agent.service: Access denied\n", status: 4 });
    const kill = await runInConsole(fedora, "kill $(systemctl show -p MainPID --value lab-agent)");
    expect(kill.output).toMatch(/Operation not permitted/);
    const bind = await runInConsole(
      fedora,
      `python3 -c 'import socket; socket.socket().bind(("0.0.0.0", 899))'`,
    );
    expect(bind.output).toContain("PermissionError: [Errno 13] Permission denied");
    expect((await runInConsole(fedora, "systemctl is-active lab-agent")).output).toBe("active\n");
    // Nor the emulator's: the user data and what cloud-init wrote are root's.
    const peek = await runInConsole(fedora, "ls /run/lab-guest/private");
    expect(peek.output).toContain("cannot open directory '/run/lab-guest/private': Permission denied");
  });

  it("shows the unit's journal to root only", async () => {
    const student = await runInConsole(fedora, "journalctl -u lab-agent");
    expect(student.output).toContain("-- No entries --");
    expect(student.output).not.toContain("listening on");
  });
});

/** Host pids of processes of this guest whose command line has `argument`. */
function processesWithArgument(argument: string, guestName: string): number[] {
  const pids: number[] = [];
  const guestInit = guestInitPid(guestName);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (commandLine.includes(argument) && descendsFrom(Number(entry), guestInit)) pids.push(Number(entry));
    } catch {
      // ended while we looked
    }
  }
  return pids;
}

// The launcher's command line names the guest: its hostname and its folder.
function guestInitPid(guestName: string): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(guestName)) return Number(entry);
    } catch {
      // ended while we looked
    }
  }
  throw new Error(`no launcher for ${guestName}`);
}

function descendsFrom(pid: number, ancestor: number): boolean {
  for (let current = pid, hops = 0; current > 1 && hops < 64; hops++) {
    if (current === ancestor) return true;
    const status = readFileSync(`/proc/${current}/status`, "utf8");
    current = Number(/^PPid:\s+(\d+)$/m.exec(status)?.[1] ?? "0");
  }
  return false;
}
