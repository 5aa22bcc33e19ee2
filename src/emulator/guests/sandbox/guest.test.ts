import { existsSync } from "node:fs";
import { patiently, patient } from "../../../common/testing/patience.ts";
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGuest, type Guest } from "./guest.ts";
import { runsPrivileged } from "../isolation/sandbox.ts";
import { echoServerCommand } from "../testing/echo-server.ts";
import { hostCgroupsOf } from "../testing/host-processes.ts";
import { SerialTranscript } from "../testing/serial-transcript.ts";

const echoServer = (port: number) => echoServerCommand(port, "127.0.0.1");

const mainUserData = `#cloud-config
users: [default]
write_files:
  - path: /home/student/notes/hello.txt
    content: |
      hello from cloud-init
  - path: /home/student/secret
    encoding: b64
    content: ${Buffer.from("s3cret").toString("base64")}
    permissions: '0600'
    owner: student:student
  - path: /etc/motd-from-guest
    content: the guest's own /etc, not the host's
runcmd:
  - echo "string ran as $(whoami) in $(pwd)" > /home/student/runcmd.txt
  - [touch, "/home/student/with space 'quoted'"]
  - ${JSON.stringify(echoServer(8099))}
`;

let rootDir: string;
let main: Guest;
let other: Guest;
let mainBootMs: number;
let runcmdDoneAtAgent = false;

beforeAll(async () => {
  rootDir = await mkdtemp(join(tmpdir(), "lab-guests-test-"));
  const started = performance.now();
  [main, other] = await Promise.all([
    startGuest({ name: "lab-vm-1", rootDir, userData: mainUserData }).then(
      (guest) =>
        new Promise<Guest>((resolve) => {
          guest.on("agent", (connected) => {
            if (!connected) return;
            mainBootMs = performance.now() - started;
            runcmdDoneAtAgent = existsSync(join(guest.homeDir, "runcmd.txt"));
            resolve(guest);
          });
        }),
    ),
    startGuest({ name: "lab-vm-2", rootDir, userData: "#cloud-config\nruncmd: [\n" }),
  ]);
});

afterAll(async () => {
  await Promise.all([main?.kill(), other?.kill()]);
  await rm(rootDir, { recursive: true, force: true });
});

const mainPrompt = /student@lab-vm-1:~\$ $/;

async function promptOn(guest: Guest, keep?: number): Promise<SerialTranscript> {
  const transcript = new SerialTranscript(guest, keep);
  transcript.type("\r");
  await transcript.waitFor(/:~\$ $/);
  transcript.clear();
  return transcript;
}

// Output of a command follows bash's bracketed-paste switch "\e[?2004l\r": patterns anchor on "\r".
describe("a guest's serial console", () => {
  it("boots quickly, runs cloud-init before the prompt and reports the agent connected", () => {
    expect(main.agentConnected).toBe(true);
    expect(runcmdDoneAtAgent).toBe(true);
    expect(mainBootMs).toBeLessThan(patient(3000));
  });

  it("runs a real bash as the guest user, named after the VMI", async () => {
    const serial = await promptOn(main);
    serial.type("echo he''llo; whoami; hostname; cat /etc/hostname\r");
    await serial.waitFor(/\rhello\r\nstudent\r\nlab-vm-1\r\nlab-vm-1\r\n/);
    await serial.waitFor(mainPrompt);
    serial.detach();
  });

  it("starts the shell in the home, which it can write, as login(1) does", async () => {
    const serial = await promptOn(main);
    serial.type("ls; echo writ''ten > relative.txt && cat ~/relative.txt\r");
    await serial.waitFor(/\sruncmd\.txt\s[\s\S]*\nwritten\r\n/);
    expect(serial.text).not.toContain("Read-only file system");
    await serial.waitFor(mainPrompt);
    serial.detach();
  });

  it("loses output while nobody is attached", async () => {
    const first = await promptOn(main);
    // The guest prints a while after we detach, then leaves a mark we can see from the host.
    first.type("(sleep 0.2; echo LOST-$((6*7)); sleep 0.1; touch ~/printed) &\r");
    await first.waitFor(mainPrompt);
    first.detach();
    await vi.waitFor(() => expect(existsSync(join(main.homeDir, "printed"))).toBe(true), patiently(5000));
    const second = await promptOn(main);
    second.type("echo after-$((2*3))\r");
    await second.waitFor(/\rafter-6\r\n/);
    expect(first.text + second.text).not.toContain("LOST-42");
    second.detach();
  });

  it("holds output back while the attachment is paused, and delivers it on resume", async () => {
    const serial = await promptOn(main);
    serial.pause();
    serial.type("echo held-$((3*3)); touch ~/held\r");
    await vi.waitFor(() => expect(existsSync(join(main.homeDir, "held"))).toBe(true), patiently(5000));
    expect(serial.text).not.toContain("held-9");
    serial.resume();
    await serial.waitFor(/\rheld-9\r\n/);
    serial.detach();
  });

  it("gives the line to the newest attachment and tells the previous one", async () => {
    const first = new SerialTranscript(main);
    const second = new SerialTranscript(main);
    expect(first.closed).toBe("replaced");
    expect(second.closed).toBeUndefined();
    first.type("echo from-first-$((1+1))\r");
    second.type("echo from-second-$((2+2))\r");
    await second.waitFor(/\rfrom-second-4\r\n/);
    expect(second.text).not.toContain("from-first-2");
    second.detach();
  });

  it("interrupts a running command with Ctrl-C and shows the prompt again within a second", async () => {
    const serial = await promptOn(main, 4096);
    serial.type("yes\r");
    await serial.waitFor(/y\r\ny\r\ny\r\n/);
    const interruptedAt = performance.now();
    serial.type(Buffer.from([0x03]));
    await serial.waitFor(/\^C[\s\S]*student@lab-vm-1:~\$ $/, 1000);
    expect(performance.now() - interruptedAt).toBeLessThan(patient(1000));
    serial.detach();
  });

  it("has a terminal whose size stty can set", async () => {
    const serial = await promptOn(main);
    serial.type("stty rows 40 cols 120; stty size; tty\r");
    await serial.waitFor(/\r40 120\r\n\/dev\/pts\/\d+\r\n/);
    serial.detach();
  });

  it("has its console's terminal at /dev/ttyS0, sized there as the agent does, after a new login too", async () => {
    const serial = await promptOn(main);
    // A new login shell, as after the student typed exit: the terminal stays the same.
    serial.type("exit\r");
    await serial.waitFor(mainPrompt);
    serial.type('[ "$(readlink -f /dev/ttyS0)" = "$(tty)" ] && echo same-ter""minal\r');
    await serial.waitFor(/\rsame-terminal\r\n/);
    // The agent's TIOCSWINSZ (lab_agent/checks.py set_tty_size), from a process that is not on the console.
    const setSize =
      'import fcntl, os, struct, termios; fd = os.open("/dev/ttyS0", os.O_RDWR | os.O_NOCTTY); ' +
      'fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 111, 0, 0))';
    // The shell waits in the foreground, so SIGWINCH is its own: its trap says so.
    serial.type(`trap 'echo winch; stty size' WINCH; python3 -c '${setSize}' & wait; trap - WINCH\r`);
    await serial.waitFor(/\nwinch\r\n33 111\r\n/);
    serial.detach();
  });

  it("carries raw bytes both ways", async () => {
    const serial = await promptOn(main);
    // "é" typed as UTF-8 comes back as the same two bytes, after a byte count from the guest.
    serial.type(
      Buffer.concat([Buffer.from("printf '%s' '"), Buffer.from([0xc3, 0xa9]), Buffer.from("' | wc -c\r")]),
    );
    await serial.waitFor(/\r2\r\n/);
    expect(serial.text).toContain("\u00c3\u00a9");
    serial.detach();
  });
});

describe("a guest's cloud-init", () => {
  it("writes write_files with their content, mode and owner (root:root unless given)", async () => {
    const hello = join(main.homeDir, "notes/hello.txt");
    expect(await readFile(hello, "utf8")).toBe("hello from cloud-init\n");
    expect((await stat(hello)).uid).toBe(runsPrivileged() ? 0 : process.getuid?.());
    expect(await readFile(join(main.homeDir, "secret"), "utf8")).toBe("s3cret");
    const secret = await stat(join(main.homeDir, "secret"));
    expect(secret.mode & 0o777).toBe(0o600);
    expect(secret.uid).toBe(main.hostUid);
    // As root a uid of the guest's own (guest-limits.test.ts), else the emulator's.
    if (!runsPrivileged()) expect(main.hostUid).toBe(process.getuid?.());
  });

  it("runs runcmd strings in sh and lists as argv, as guest root in /", async () => {
    expect(await readFile(join(main.homeDir, "runcmd.txt"), "utf8")).toBe(
      `string ran as ${runsPrivileged() ? "root" : "student"} in /\n`,
    );
    expect(existsSync(join(main.homeDir, "with space 'quoted'"))).toBe(true);
  });

  it("writes outside the home into the guest's own /etc, never the host's, and reports what it ignored", async () => {
    expect(existsSync("/etc/motd-from-guest")).toBe(false);
    const serial = await promptOn(main);
    serial.type("cat /etc/motd-from-guest; echo\r");
    await serial.waitFor(/\rthe guest's own \/etc, not the host's\r\n/);
    serial.detach();
    // users: [default] is there already: nothing a real guest would not do, so nothing in its boot.
    expect(main.bootLog).toEqual([]);
  });

  it("boots a guest whose user data is broken, with a boot log line", () => {
    expect(other.agentConnected).toBe(true);
    expect(other.bootLog).toHaveLength(1);
    expect(other.bootLog[0]).toMatch(/^cloud-init: user data is not valid YAML, ignored: /);
  });
});

describe("a guest's isolation", () => {
  it("cannot write the repository, the host's system or another guest's home", async () => {
    const targets = [
      join(process.cwd(), "lab-guest-test"),
      "/etc/lab-guest-test",
      "/usr/lab-guest-test",
      join(other.homeDir, "intruder"),
      "/home/student/../lab-guest-test",
    ];
    const serial = await promptOn(main);
    serial.type(
      `for p in ${targets.map((target) => `'${target}'`).join(" ")}; do (echo x > "$p") 2>/dev/null && echo "wrote $p" || echo "refused $p"; done; echo do''ne\r`,
    );
    const output = await serial.waitFor(/\ndone\r\n/);
    for (const target of targets) expect(output).toContain(`refused ${target}`);
    expect(output).not.toMatch(/wrote \//);
    expect(targets.filter((target) => existsSync(target))).toEqual([]);
    serial.detach();
  });

  it("shows only its own processes, with no host path in any command line, as a VM would", async () => {
    const commandLines = await commandLinesIn(main);
    expect(commandLines).toContain("/bin/bash -l");
    expect(commandLines.filter((line) => line.includes(rootDir) || line.includes(process.cwd()))).toEqual([]);
  });

  it("has no network: the host's loopback is out of reach", async () => {
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const serial = await promptOn(main);
      serial.type(
        `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo reach''able || echo unreach''able\r`,
      );
      const output = await serial.waitFor(/\r(un)?reachable\r\n/);
      expect(output).toContain("\runreachable\r\n");
      expect(connections).toBe(0);
      serial.detach();
    } finally {
      server.close();
    }
  });
});

describe("a guest's ports", () => {
  it("reaches a server listening in the guest through connect(port)", async () => {
    const socket = await vi.waitFor(() => main.connect(8099), patiently(5000, 50));
    socket.write("ping through the relay");
    const reply = await new Promise<string>((resolve) =>
      socket.once("data", (data: Buffer) => resolve(String(data))),
    );
    expect(reply).toBe("ping through the relay");
    socket.destroy();
  });

  it("fails clearly when nothing listens on the port", async () => {
    await expect(main.connect(8100)).rejects.toMatchObject({
      code: "ECONNREFUSED",
      message: "connection refused: nothing listens on port 8100 in guest lab-vm-1",
    });
  });
});

describe("a guest's agent", () => {
  it("answers guestosinfo, userlist and filesystemlist in KubeVirt's shapes", async () => {
    const osRelease = await readFile("/etc/os-release", "utf8");
    const info = await main.guestOsInfo();
    expect(info).toMatchObject({
      hostname: "lab-vm-1",
      os: { id: /^ID=(.*)$/m.exec(osRelease)?.[1]?.replaceAll('"', "") },
      fsFreezeStatus: "",
      userList: [{ userName: "student", domain: "" }],
    });
    expect(info.timezone).toMatch(/^.+, -?\d+$/);
    const users = await main.userList();
    expect(users.metadata).toEqual({});
    expect(users.items).toEqual([{ userName: "student", domain: "", loginTime: expect.any(Number) }]);
    expect(Math.abs((users.items[0]?.loginTime ?? 0) - Date.now() / 1000)).toBeLessThan(600);
    const { items } = await main.filesystemList();
    const home = items.find((disk) => disk.mountPoint === "/home/student");
    expect(home?.usedBytes).toBeGreaterThan(0);
    expect(home?.totalBytes).toBeGreaterThanOrEqual(home?.usedBytes ?? Infinity);
    const place = (disk: { diskName: string; mountPoint: string; fileSystemType: string }) =>
      `${disk.diskName} ${disk.mountPoint} ${disk.fileSystemType}`;
    expect(info.fsInfo.disks.map(place)).toEqual(items.map(place));
  });
});

describe("killing a guest", () => {
  it("ends all its processes, closes its console and removes its home", async () => {
    const marker = `31337.${Math.floor(Math.random() * 1e6)}`;
    const serial = await promptOn(other);
    serial.type(`sleep ${marker} & echo start''ed\r`);
    await serial.waitFor(/\nstarted\r\n/);
    // The shell may print before its child has become `sleep`.
    await vi.waitFor(
      async () => expect(await processesRunning(`sleep\0${marker}`)).toHaveLength(1),
      patiently(),
    );
    const agentEvents: boolean[] = [];
    other.on("agent", (connected) => agentEvents.push(connected));

    await other.kill();

    expect(await processesRunning(`sleep\0${marker}`)).toEqual([]);
    expect(serial.closed).toBe("stopped");
    expect(other.agentConnected).toBe(false);
    expect(agentEvents).toEqual([false]);
    await expect(other.connect(8099)).rejects.toMatchObject({ code: "EGUESTSTOPPED" });
    expect(existsSync(other.homeDir)).toBe(false);
  });

  it("prints its boot on the serial line as a terminal shows it: every line feed after a CR", async () => {
    const guest = await startGuest({
      name: "lab-vm-boot-lines",
      rootDir,
      userData: "#cloud-config\nruncmd: [echo from runcmd]\n",
      cloudInitDelayMs: 300,
    });
    const serial = new SerialTranscript(guest);
    await serial.waitFor(/cloud-init: finished/, patient(5000));
    expect(serial.text).toContain("from runcmd\r\n");
    expect(serial.text).toMatch(/Cloud-init v\. [^\r\n]*\r\n/);
    expect(serial.text.replaceAll("\r\n", "")).not.toContain("\n");
    serial.detach();
    await guest.kill();
  });

  it("keeps the home when asked", async () => {
    const guest = await startGuest({
      name: "lab-vm-keep",
      rootDir,
      userData: "#cloud-config\nwrite_files: [{path: /home/student/work.txt, content: mine}]\n",
    });
    await vi.waitFor(() => expect(guest.agentConnected).toBe(true), patiently());
    await guest.kill({ keepHome: true });
    expect(await readFile(join(guest.homeDir, "work.txt"), "utf8")).toBe("mine");
    expect(await readdir(join(guest.homeDir, ".."))).toEqual(["home"]);
  });

  it("ends and releases the guest even when keeping its home fails, and says so", async () => {
    const name = "lab-vm-keep-fails";
    const guest = await startGuest({ name, rootDir });
    await vi.waitFor(() => expect(guest.agentConnected).toBe(true), patiently());
    const [launcher] = await childrenOfThisProcess(await processesRunning(name));
    const cgroups = await hostCgroupsOf(launcher ?? 0);
    const [folder = ""] = (await readdir(rootDir)).filter((entry) => entry.startsWith(`${name}-`));
    const guestDir = join(rootDir, folder);
    // cp cannot put the home's directory where a file is.
    await writeFile(join(guestDir, "home"), "in the way");

    await expect(guest.kill({ keepHome: true })).rejects.toThrow(/keeping its home failed/);

    expect(await processesRunning(name)).toEqual([]);
    expect(existsSync(join(guestDir, "boot"))).toBe(false);
    expect(cgroups.length).toBeGreaterThan(0);
    for (const cgroup of cgroups) expect(existsSync(cgroup.dir)).toBe(false);
  });

  it("reports a sandbox that died on its own, and takes the rest of it down", async () => {
    const guest = await startGuest({ name: "lab-vm-crash", rootDir });
    const exits: string[] = [];
    guest.on("exit", (reason) => exits.push(reason));
    // The launcher's command line names the guest (its hostname, its folder).
    const [launcher] = await childrenOfThisProcess(await processesRunning("lab-vm-crash"));
    expect(launcher).toBeDefined();
    process.kill(launcher ?? 0, "SIGKILL");
    await vi.waitFor(() => expect(exits).toHaveLength(1), patiently());
    expect(exits[0]).toMatch(/exited with SIGKILL/);
    expect(guest.agentConnected).toBe(false);
    // bwrap --die-with-parent: the sandbox does not outlive its launcher.
    await vi.waitFor(async () => expect(await processesRunning("lab-vm-crash")).toEqual([]), patiently());
    await guest.kill();
    expect(existsSync(guest.homeDir)).toBe(false);
  });
});

describe("a guest in an unshare sandbox", () => {
  it("boots, answers on the console and through connect(port), and dies with kill()", async () => {
    const guest = await startGuest({
      name: "lab-vm-unshare",
      rootDir,
      sandbox: "unshare",
      userData: `#cloud-config\nruncmd:\n  - ${JSON.stringify(echoServer(8099))}\n`,
    });
    try {
      const serial = await promptOn(guest);
      serial.type("echo he''llo; hostname\r");
      await serial.waitFor(/\rhello\r\nlab-vm-unshare\r\n/);
      const socket = await vi.waitFor(() => guest.connect(8099), patiently(5000, 50));
      socket.end("over unshare");
      const reply = await new Promise<string>((resolve) =>
        socket.once("data", (data: Buffer) => resolve(String(data))),
      );
      expect(reply).toBe("over unshare");
      socket.destroy();
      expect((await commandLinesIn(guest)).filter((line) => line.includes(rootDir))).toEqual([]);
    } finally {
      await guest.kill();
    }
    expect(existsSync(guest.homeDir)).toBe(false);
    expect(await processesRunning("lab-vm-unshare")).toEqual([]);
  });
});

/** The command line of every process the guest sees, as `ps -ef` shows them, pid 1 first. */
async function commandLinesIn(guest: Guest): Promise<string[]> {
  const serial = await promptOn(guest);
  serial.type(
    `for p in $(ls /proc | sort -n); do [ -r /proc/$p/cmdline ] && echo "<$(tr '\\0' ' ' < /proc/$p/cmdline)>"; done; echo do''ne\r`,
  );
  const output = await serial.waitFor(/\ndone\r\n/);
  serial.detach();
  return [...output.matchAll(/^<(.*?) ?>\r$/gm)].map((match) => match[1] ?? "");
}

async function childrenOfThisProcess(pids: number[]): Promise<number[]> {
  const children: number[] = [];
  for (const pid of pids) {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    if (new RegExp(`^PPid:\\s+${process.pid}$`, "m").test(status)) children.push(pid);
  }
  return children;
}

/** Pids of host processes whose NUL-separated command line contains `text`. */
async function processesRunning(text: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = await readFile(`/proc/${entry}/cmdline`, "utf8");
      if (commandLine.includes(text)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}
