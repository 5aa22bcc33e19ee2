import { existsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectSandbox, sandboxAvailable } from "./sandbox-support.ts";
import {
  GUEST_UID,
  SANDBOX_PATH,
  asUser,
  runsPrivileged,
  sandboxLaunch,
  type SandboxBackend,
} from "./sandbox.ts";
import { asOrdinaryUser } from "../testing/as-ordinary-user.ts";
import { runProgram } from "../testing/run-program.ts";

const repoDir = process.cwd();
let hostServer: net.Server;
let hostPort: number;
let hostConnections = 0;

beforeAll(async () => {
  hostServer = net.createServer((socket) => {
    hostConnections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => hostServer.listen(0, "127.0.0.1", resolve));
  hostPort = (hostServer.address() as net.AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => hostServer.close(() => resolve())));

describe("sandboxAvailable", () => {
  it("finds bubblewrap on this host", async () => {
    expect(await sandboxAvailable()).toEqual({ ok: true, backend: "bwrap" });
  });

  it("names the packages to install when no backend can start", async () => {
    const support = await detectSandbox(["bwrap", "unshare"], "/nonexistent");
    expect(support.ok).toBe(false);
    if (support.ok) return;
    expect(support.message).toContain('install the "bubblewrap" package');
    expect(support.message).toContain("bwrap is not installed");
    expect(support.message).toContain('install the "util-linux" and "iproute2" packages');
  });
});

// Every backend, as root (no user namespace) and, when we are root, also as an ordinary user would run it.
const cases: [SandboxBackend, boolean][] = (["bwrap", "unshare"] as const).flatMap((backend) =>
  (runsPrivileged() ? [true, false] : [false]).map((privileged): [SandboxBackend, boolean] => [
    backend,
    privileged,
  ]),
);

describe.each(cases)("a %s sandbox (privileged: %s)", (backend, privileged) => {
  let base: string;
  let home: string;
  let tmp: string;
  let otherHome: string;
  let report: Map<string, string>;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), "lab-sandbox-test-"));
    await chmod(base, 0o755);
    home = join(base, "home");
    tmp = join(base, "tmp");
    otherHome = join(base, "other-home");
    const rootMountPoint = join(base, "root");
    for (const dir of [home, tmp, otherHome, rootMountPoint]) await mkdir(dir);
    await writeFile(join(otherHome, "theirs"), "private\n");
    // Running as root but testing the unprivileged path: everything belongs to the user we run it as.
    const ordinaryUser = runsPrivileged() && !privileged;
    if (privileged || ordinaryUser) {
      for (const dir of [home, tmp, otherHome, rootMountPoint]) await chown(dir, GUEST_UID, GUEST_UID);
    }
    const launch = sandboxLaunch(
      {
        hostname: "sandbox-test",
        directories: ["/home"],
        writable: [
          { hostPath: home, guestPath: "/home/student" },
          { hostPath: tmp, guestPath: "/tmp" },
        ],
        readOnly: [],
        workDir: "/home/student",
        rootMountPoint,
        command: [...asUser(GUEST_UID, privileged), "/bin/bash", "-c", probeScript(otherHome, hostPort)],
      },
      backend,
      privileged,
    );
    const [file, args] = ordinaryUser ? asOrdinaryUser(launch.file, launch.args) : [launch.file, launch.args];
    report = parseReport(await runProgram(file, args, { PATH: SANDBOX_PATH, HOME: "/home/student" }));
  });

  afterAll(() => rm(base, { recursive: true, force: true }));

  it("runs the guest as an unprivileged user with the given hostname", () => {
    expect(report.get("uid")).toBe(`${GUEST_UID}`);
    expect(report.get("hostname")).toBe("sandbox-test");
  });

  it("lets the guest write its own home and /tmp", () => {
    expect(report.get("home")).toBe("written");
    expect(report.get("tmp")).toBe("written");
    expect(existsSync(join(home, "f"))).toBe(true);
    expect(existsSync(join(tmp, "f"))).toBe(true);
  });

  it("keeps the host's system, the repository and another guest's home out of reach", () => {
    for (const place of ["root", "etc", "usr", "repo", "other"])
      expect([place, report.get(place)]).toEqual([place, "refused"]);
    expect(report.get("other-read")).toBe("refused");
    expect(existsSync(join(repoDir, "lab-guest-test"))).toBe(false);
    expect(existsSync("/etc/lab-guest-test")).toBe(false);
    expect(existsSync(join(otherHome, "intruder"))).toBe(false);
  });

  it("has no network: the host's loopback is not reachable", () => {
    expect(report.get("net")).toBe("refused");
    expect(hostConnections).toBe(0);
  });
});

function probeScript(otherHome: string, port: number): string {
  const q = (value: string) => `'${value}'`;
  return `
try() { if (eval "$2") 2>/dev/null; then echo "$1=written"; else echo "$1=refused"; fi; }
echo "uid=$(id -u)"
echo "hostname=$(hostname)"
try home 'echo x > ~/f'
try tmp 'echo x > /tmp/f'
try root 'echo x > /f'
try etc 'echo x > /etc/lab-guest-test'
try usr 'echo x > /usr/lab-guest-test'
try repo ${q(`echo x > ${join(repoDir, "lab-guest-test")}`)}
try other ${q(`echo x > ${join(otherHome, "intruder")}`)}
try other-read ${q(`cat ${join(otherHome, "theirs")} >/dev/null`)}
try net ${q(`exec 3<>/dev/tcp/127.0.0.1/${port}`)}
`;
}

function parseReport(output: string): Map<string, string> {
  const entries = output
    .split("\n")
    .map((line) => /^([a-z-]+)=(.*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match): [string, string] => [match[1] ?? "", match[2] ?? ""]);
  return new Map(entries);
}
