// A guest cannot hurt the machine it runs on (security review H3): it has its own limits on
// processes, memory, CPU and disk, and as root a uid of its own that no host user has. Every
// reproduction is bounded so that it stays harmless even if a limit were missing: the fork bomb stops
// at 1000 processes that end by themselves within a minute, the memory and disk hogs at 512 MiB.
import { patiently } from "../../../common/testing/patience.ts";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGuest, type Guest } from "../sandbox/guest.ts";
import { runsPrivileged } from "../isolation/sandbox.ts";
import { shellQuote } from "../shell-quote.ts";
import { runInConsole } from "../testing/console-command.ts";
import {
  hostAllCgroupsOf,
  hostCgroupLimitsOf,
  hostCgroupsOf,
  hostEffectiveCgroupLimitsOf,
  hostPasswdUids,
  hostProcessCountOf,
  hostProcessesRunning,
  type HostProcess,
} from "../testing/host-processes.ts";

const mebibyte = 2 ** 20;
const limits = { pids: 128, memoryBytes: 160 * mebibyte, diskBytes: 64 * mebibyte, cpuMillicores: 500 };
const privileged = runsPrivileged();

let rootDir: string;
const guests: Guest[] = [];

async function bootedGuest(name: string, userData?: string): Promise<Guest> {
  const guest = await startGuest({ name, rootDir, limits, ...(userData === undefined ? {} : { userData }) });
  guests.push(guest);
  await vi.waitFor(() => expect(guest.agentConnected).toBe(true), patiently(10_000));
  return guest;
}

/** Starts `sleep` with a unique argument in the guest and finds that process from the host. */
async function markedProcess(guest: Guest): Promise<HostProcess> {
  const marker = `300.${Math.floor(Math.random() * 1e9)}`;
  await runInConsole(guest, `sleep ${marker} & true`);
  return vi.waitFor(async () => {
    const [found] = await hostProcessesRunning(`sleep\0${marker}`);
    if (!found) throw new Error(`no sleep ${marker} on the host yet`);
    return found;
  }, patiently());
}

beforeAll(async () => {
  rootDir = await mkdtemp(join(tmpdir(), "lab-guest-limits-test-"));
});

afterAll(async () => {
  await Promise.all(guests.map((guest) => guest.kill()));
  await rm(rootDir, { recursive: true, force: true });
});

describe("a guest's limits", () => {
  it("contains a fork bomb: the guest stops below its process limit and the others keep working", async () => {
    const [bomb, bystander] = await Promise.all([bootedGuest("lab-fork-bomb"), bootedGuest("lab-bystander")]);
    const student = await markedProcess(bomb);
    // Children that sleep 40 s and end by themselves: nothing outlives the test even without a limit.
    const program = [
      "import os, time",
      "n = 0",
      "for i in range(1000):",
      "    try:",
      "        pid = os.fork()",
      "    except OSError:",
      "        break",
      "    if pid == 0:",
      "        time.sleep(40)",
      "        os._exit(0)",
      "    n += 1",
      "print('lab-bomb forked', n, flush=True)",
    ].join("\n");
    const forking = runInConsole(bomb, `python3 -c ${shellQuote(program)}`, 30_000);
    const { output } = await forking;
    const forked = Number(/lab-bomb forked (\d+)/.exec(output)?.[1] ?? "NaN");
    console.log(`fork bomb: ${forked} processes forked (pids limit ${limits.pids})`);
    expect(forked).toBeLessThan(limits.pids);
    if (privileged) {
      const onHost = await hostProcessCountOf(student.uid);
      console.log(`fork bomb: ${onHost} host processes of the guest's uid ${student.uid}`);
      expect(onHost).toBeLessThanOrEqual(limits.pids);
    }
    const alive = await runInConsole(bystander, "echo al''ive");
    expect(alive.output.trim()).toBe("alive");
    await bomb.killProcesses("lab-bomb");
  }, 60_000);

  it("kills what allocates beyond the memory cap, and the guest stays usable", async () => {
    const guest = await bootedGuest("lab-memory-hog");
    const hog = await runInConsole(
      guest,
      `python3 -c 'b = b"x" * (512 << 20); print("allo" "cated", len(b))'`,
      30_000,
    );
    expect(hog.output).not.toContain("allocated");
    expect([137, 1]).toContain(hog.status);
    expect(hog.output).toMatch(/Killed|MemoryError/);
    const after = await runInConsole(guest, "echo sti''ll-here");
    expect(after.output.trim()).toBe("still-here");
  }, 60_000);

  it("caps the disk: home and /tmp fill up with No space left on device", async () => {
    const guest = await bootedGuest("lab-disk-hog");
    const home = await runInConsole(guest, "head -c 100M /dev/zero > ~/fill");
    expect(home.status).not.toBe(0);
    expect(home.output).toContain("No space left on device");
    const tmp = await runInConsole(guest, "head -c 1M /dev/zero > /tmp/more");
    expect(tmp.output).toContain("No space left on device");
    const freed = await runInConsole(guest, "rm ~/fill /tmp/more; echo x > ~/small && cat ~/small");
    expect(freed.output.trim()).toBe("x");
    const size = await runInConsole(guest, "df -k --output=size ~ | tail -1");
    expect(Number(size.output.trim())).toBe(limits.diskBytes / 1024);
  }, 60_000);

  it("puts the guest in cgroups of its own with its limits, and removes them when it ends", async () => {
    const guest = await bootedGuest("lab-cgroup");
    const student = await markedProcess(guest);
    const mine = await hostCgroupsOf(process.pid);
    const its = await hostCgroupsOf(student.pid);
    expect(its.map((cgroup) => cgroup.controller).sort()).toEqual(
      mine.map((cgroup) => cgroup.controller).sort(),
    );
    for (const cgroup of its) {
      expect(mine.map((own) => own.dir)).not.toContain(cgroup.dir);
      expect(existsSync(cgroup.dir)).toBe(true);
    }
    const rlimit = await runInConsole(guest, "grep 'Max processes' /proc/self/limits");
    expect(rlimit.output).toMatch(new RegExp(`Max processes\\s+${limits.pids}\\s+${limits.pids}\\s`));
    expect(await hostEffectiveCgroupLimitsOf(its)).toEqual({
      pids: limits.pids,
      // The disk is memory the guest's cgroup pays for (docs/emulator.md).
      memoryBytes: limits.memoryBytes + limits.diskBytes,
      cpuQuotaUs: (limits.cpuMillicores / 1000) * 100_000,
    });

    // The limits sit above the guest's own cgroup, which its cgroup namespace makes its root.
    expect(await hostCgroupLimitsOf(its)).not.toMatchObject({ pids: limits.pids });

    await guest.kill();
    for (const cgroup of its) {
      expect(existsSync(cgroup.dir)).toBe(false);
      expect(existsSync(dirname(cgroup.dir))).toBe(false);
    }
  }, 30_000);

  // Review finding: the guest's cgroup namespace had the limited cgroup as its root, so guest root
  // could mount cgroupfs in a user namespace of its own and write "max" to pids.max, and then fork
  // beyond every limit (uid 0 is exempt from RLIMIT_NPROC).
  it("cannot be lifted from inside, through a cgroupfs of the guest's own, by guest root or the student", async () => {
    const userData = [
      "#cloud-config",
      JSON.stringify({
        write_files: [{ path: "/usr/local/bin/lab-lift-limits", permissions: "0755", content: liftLimits }],
        runcmd: [`/usr/local/bin/lab-lift-limits ${limits.pids} root`],
      }),
    ].join("\n");
    const guest = await bootedGuest("lab-cgroup-escape", userData);
    const ofLifter = (lines: string[]) =>
      lines.filter((line) => line.startsWith("lab-lift-limits ")).map((line) => line.trim());
    const asRoot = ofLifter(guest.consoleLogLines());
    const student = await markedProcess(guest);
    const asStudent = await runInConsole(guest, `lab-lift-limits ${limits.pids} student`, 30_000);
    const results = [...asRoot, ...ofLifter(asStudent.output.split("\n"))];
    expect(results.map((line) => line.split(" ")[1])).toEqual(["root", "student"]);
    for (const line of results) {
      const forked = Number(/ forked (\d+)/.exec(line)?.[1] ?? "NaN");
      expect(forked).toBeLessThan(limits.pids);
    }
    expect(await hostEffectiveCgroupLimitsOf(await hostCgroupsOf(student.pid))).toEqual({
      pids: limits.pids,
      memoryBytes: limits.memoryBytes + limits.diskBytes,
      cpuQuotaUs: (limits.cpuMillicores / 1000) * 100_000,
    });
  }, 60_000);
  // On v1 and hybrid hosts a guest left in the emulator's own cgroups of the hierarchies without a
  // limit (freezer, cpuset, name=systemd, the unified one...) has them as its cgroup namespace's
  // root: guest root could mount them and freeze the emulator, and every guest with it.
  it.runIf(privileged)(
    "is in cgroups of its own in every hierarchy, so its cgroup namespace holds nothing of the emulator's",
    async () => {
      const guest = await bootedGuest("lab-cgroup-everywhere");
      const student = await markedProcess(guest);
      const mine = await hostAllCgroupsOf(process.pid);
      const its = await hostAllCgroupsOf(student.pid);
      expect(its.map((cgroup) => cgroup.hierarchy).sort()).toEqual(mine.map((own) => own.hierarchy).sort());
      for (const cgroup of its) {
        const own = mine.find((m) => m.hierarchy === cgroup.hierarchy);
        expect(cgroup.dir, cgroup.hierarchy).not.toBe(own?.dir);
        expect(basename(cgroup.dir), cgroup.hierarchy).toBe("sandbox");
        expect(basename(dirname(dirname(cgroup.dir))), cgroup.hierarchy).toBe(`lab-emulator-${process.pid}`);
        expect(cgroup.dir.startsWith(`${cgroup.mountPoint}/`), cgroup.hierarchy).toBe(true);
      }
      await guest.kill();
      for (const cgroup of its) expect(existsSync(dirname(cgroup.dir)), cgroup.hierarchy).toBe(false);
    },
    60_000,
  );
});

/**
 * Mounts every cgroup hierarchy of the guest in a user, mount and cgroup namespace of its own, writes
 * "no limit" into each limit file at the mount's root, then forks twice the process limit of children
 * that end by themselves within seconds. Prints "lab-lift-limits WHO <file>:<result>... forked N".
 */
const liftLimits = `#!/usr/bin/python3
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
limit, who = int(sys.argv[1]), sys.argv[2]
hierarchies = []
for line in open("/proc/self/cgroup"):
    _, controllers, _ = line.rstrip("\\n").split(":", 2)
    if controllers == "" or set(controllers.split(",")) & {"pids", "memory", "cpu"}:
        hierarchies.append(controllers)
unlimited = {"pids.max": "max", "memory.max": "max", "memory.swap.max": "max",
             "memory.limit_in_bytes": "-1", "memory.memsw.limit_in_bytes": "-1",
             "cpu.max": "max", "cpu.cfs_quota_us": "-1"}
targets = []
for index, controllers in enumerate(hierarchies):
    target = "/tmp/lab-cgroupfs-%s-%d" % (who, index)
    os.makedirs(target, exist_ok=True)
    targets.append(target)
reader, writer = os.pipe()
if os.fork() == 0:
    os.close(reader)
    report = []
    if libc.unshare(0x10000000 | 0x20000 | 0x02000000) != 0:
        report.append("unshare:" + os.strerror(ctypes.get_errno()))
    else:
        for controllers, target in zip(hierarchies, targets):
            fstype = b"cgroup" if controllers else b"cgroup2"
            if libc.mount(b"none", target.encode(), fstype, 0, controllers.encode() or None) != 0:
                report.append("mount-%s:%s" % (controllers or "v2", os.strerror(ctypes.get_errno())))
                continue
            # Twice: v1 refuses a memory limit above the memory+swap one until that one is lifted.
            results = {}
            for _ in range(2):
                for name, value in unlimited.items():
                    path = os.path.join(target, name)
                    if not os.path.exists(path) or results.get(name) == "written":
                        continue
                    try:
                        with open(path, "w") as file:
                            file.write(value)
                        results[name] = "written"
                    except OSError as error:
                        results[name] = error.strerror
            report.extend("%s:%s" % item for item in results.items())
    os.write(writer, " ".join(report).encode())
    os._exit(0)
os.close(writer)
report = os.read(reader, 65536).decode()
os.wait()
forked = 0
for _ in range(2 * limit):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    forked += 1
print("lab-lift-limits", who, report, "forked", forked, flush=True)
for _ in range(forked):
    os.wait()
`;

describe.runIf(privileged)("a guest's uid", () => {
  it("is its own in each guest, no host user's, and the student's inside", async () => {
    const [first, second] = await Promise.all([bootedGuest("lab-uid-1"), bootedGuest("lab-uid-2")]);
    const [a, b] = await Promise.all([markedProcess(first), markedProcess(second)]);
    expect(a.uid).not.toBe(b.uid);
    const known = await hostPasswdUids();
    for (const uid of [a.uid, b.uid]) {
      expect(uid).toBeGreaterThanOrEqual(2 ** 20);
      expect(known.has(uid)).toBe(false);
    }
    const inside = await runInConsole(first, "id -un; id -u; stat -c %u ~");
    expect(inside.output.trim().split("\n")).toEqual(["student", String(a.uid), String(a.uid)]);
  }, 30_000);
});
