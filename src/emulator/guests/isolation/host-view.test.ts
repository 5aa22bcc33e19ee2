// What of the host a guest sees: the operating system's /usr, read-only, and of /etc only what
// programs read to run. Never /opt, the host's users, keys or whatever an operator put in /etc or
// /usr/local: run by an ordinary user, the guest is that user and would read all of it (the security
// review's H4 read the BFF's session secret out of a DATA_DIR under /opt).
import { existsSync, readFileSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGuest, type Guest } from "../sandbox/guest.ts";
import {
  GUEST_UID,
  SANDBOX_PATH,
  asUser,
  runsPrivileged,
  sandboxLaunch,
  type SandboxBackend,
} from "./sandbox.ts";
import { runInConsole } from "../testing/console-command.ts";
import { asOrdinaryUser } from "../testing/as-ordinary-user.ts";
import { runProgram } from "../testing/run-program.ts";

/** /etc as a guest may see it: what programs need to run, when the host has it. */
const minimalEtc = [
  "alternatives",
  "bash.bashrc",
  "debian_version",
  "inputrc",
  "iproute2",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "lsb-release",
  "man_db.conf",
  "manpath.config",
  "mtab",
  "nanorc",
  "nsswitch.conf",
  "os-release",
  "profile",
  "profile.d",
  "protocols",
  "python3",
  "redhat-release",
  "services",
  "shells",
  "ssl",
  "system-release",
  "terminfo",
  "timezone",
  "vim",
];
const isMinimal = (name: string) => minimalEtc.includes(name) || /^python3\.\d+$/.test(name);
/** What the guest's own boot writes there (boot-files.ts), and the guest's own units. */
const generatedEtc = ["passwd", "group", "shadow", "gshadow", "hosts", "hostname", "systemd"];

/** Files an operator might keep on the host, which no guest may see. */
let planted: { optFile: string; etcFile: string; usrLocalFile: string };

beforeAll(async () => {
  if (!runsPrivileged()) return;
  const secret = "operator's secret\n";
  planted = {
    optFile: await mkdtemp("/opt/lab-host-view-"),
    etcFile: await mkdtemp("/etc/lab-host-view-"),
    usrLocalFile: await mkdtemp("/usr/local/lab-host-view-"),
  };
  for (const dir of Object.values(planted)) {
    await chmod(dir, 0o755);
    await writeFile(join(dir, "session-secret"), secret, { mode: 0o644 });
  }
});

afterAll(async () => {
  if (!planted) return;
  for (const dir of Object.values(planted)) await rm(dir, { recursive: true, force: true });
});

const viewScript = () =>
  [
    `echo "opt=$(test -e /opt && echo present || echo absent)"`,
    `echo "etc=$(ls -A /etc | tr '\\n' ' ')"`,
    `echo "ssl=$(ls -A /etc/ssl 2>/dev/null | tr '\\n' ' ')"`,
    ...Object.entries(planted).map(
      ([where, dir]) => `echo "${where}=$(cat ${dir}/session-secret 2>/dev/null || echo unreadable)"`,
    ),
  ].join("; ");

function parseView(output: string): Record<string, string> {
  return Object.fromEntries(
    output
      .split("\n")
      .map((line) => /^([A-Za-z]+)=(.*)$/.exec(line))
      .filter((match) => match !== null)
      .map((match) => [match[1] ?? "", (match[2] ?? "").trim()]),
  );
}

const cases: [SandboxBackend, boolean][] = (["bwrap", "unshare"] as const).flatMap((backend) =>
  [true, false].map((privileged): [SandboxBackend, boolean] => [backend, privileged]),
);

// The sandbox alone, before guest-setup.py makes the guest's own /etc from what it sees.
describe.runIf(runsPrivileged()).each(cases)("a %s sandbox (privileged: %s)", (backend, privileged) => {
  let view: Record<string, string>;

  beforeAll(async () => {
    const base = await mkdtemp(join(tmpdir(), "lab-host-view-test-"));
    await chmod(base, 0o755);
    try {
      const rootMountPoint = join(base, "root");
      await mkdir(rootMountPoint);
      if (!privileged) await chown(rootMountPoint, GUEST_UID, GUEST_UID);
      const launch = sandboxLaunch(
        {
          hostname: "host-view",
          directories: [],
          writable: [],
          readOnly: [],
          workDir: "/",
          rootMountPoint,
          command: [...asUser(GUEST_UID, privileged), "/bin/sh", "-c", viewScript()],
        },
        backend,
        privileged,
      );
      // Testing the unprivileged sandbox as root: run its launcher as an ordinary user would.
      const [file, args] = privileged ? [launch.file, launch.args] : asOrdinaryUser(launch.file, launch.args);
      view = parseView(await runProgram(file, args, { PATH: SANDBOX_PATH }));
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it("has no /opt and, of /etc, only what programs need", () => {
    expect([view.opt, view.optFile, view.etcFile]).toEqual(["absent", "unreadable", "unreadable"]);
    const etc = (view.etc ?? "").split(" ").filter(Boolean);
    expect(etc.filter((name) => !isMinimal(name))).toEqual([]);
    expect(etc).toContain("ld.so.cache");
    expect(view.ssl).toBe(existsSync("/etc/ssl/openssl.cnf") ? "openssl.cnf" : "");
    // /usr/local is still the host's here: guest-setup.py covers it with the guest's own.
  });
});

describe.runIf(runsPrivileged())("a guest", () => {
  let rootDir: string;
  let guests: Guest[];

  beforeAll(async () => {
    rootDir = await mkdtemp(join(tmpdir(), "lab-host-view-guests-"));
    guests = await Promise.all(
      (["bwrap", "unshare"] as const).map((sandbox) =>
        startGuest({ name: `view-${sandbox}`, rootDir, sandbox }).then(
          (guest) =>
            new Promise<Guest>((resolve) => {
              if (guest.agentConnected) resolve(guest);
              guest.on("agent", (connected) => connected && resolve(guest));
            }),
        ),
      ),
    );
  }, 30_000);

  afterAll(async () => {
    await Promise.all(guests.map((guest) => guest.kill()));
    await rm(rootDir, { recursive: true, force: true });
  });

  it("sees neither /opt nor the host's users, nor any /etc file programs do not need", async () => {
    const hostUsers = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .map((line) => line.split(":")[0])
      .filter((name) => name && !["root", "nobody"].includes(name));
    expect(hostUsers).not.toEqual([]);
    for (const guest of guests) {
      const view = parseView((await runInConsole(guest, viewScript())).output);
      expect([guest.name, view.opt, view.optFile, view.etcFile, view.usrLocalFile]).toEqual([
        guest.name,
        "absent",
        "unreadable",
        "unreadable",
        "unreadable",
      ]);
      const etc = (view.etc ?? "").split(" ").filter(Boolean);
      expect([guest.name, etc.filter((name) => !isMinimal(name) && !generatedEtc.includes(name))]).toEqual([
        guest.name,
        [],
      ]);
      const users = (await runInConsole(guest, "cut -d: -f1 /etc/passwd")).output.trim().split("\n");
      expect([guest.name, users]).toEqual([guest.name, ["root", "student", "nobody"]]);
      // What programs need is there and works: the dynamic linker's cache, the name service switch,
      // the alternatives behind a command, service names.
      const works = await runInConsole(
        guest,
        `python3 -c 'import os, pwd, socket; print(socket.getservbyname("ssh"), pwd.getpwuid(os.getuid()).pw_name)'`,
      );
      expect([guest.name, works.output]).toEqual([guest.name, "22 student\n"]);
    }
  });
});
