// Test helper: plays a port relay gone bad, from the relay's own side of its channels. Run as root, a
// Python helper takes the relay's descriptors with pidfd_getfd(2) (as the security review's grab.py
// did from inside a guest) and
// - writeAsRelay: writes bytes into every channel the relay holds to the emulator (a connected Unix
//   socket whose peer, by SO_PEERCRED, is this process);
// - answerAsRelay: stops the relay (SIGSTOP), takes its listening socket and answers the emulator's
//   next connections itself, one payload each.
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Guest } from "../sandbox/guest.ts";
import { patient } from "../../../common/testing/patience.ts";
import { HOST_PYTHON } from "../boot/boot-files.ts";

const program = String.raw`import ctypes, json, os, select, signal, socket, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
PIDFD_OPEN, PIDFD_GETFD = 434, 438
SO_ACCEPTCONN = 30

def take_all(pid):
    pidfd = libc.syscall(PIDFD_OPEN, pid, 0)
    if pidfd < 0:
        sys.exit("pidfd_open(%d): errno %d" % (pid, ctypes.get_errno()))
    taken = {}
    for name in sorted(os.listdir("/proc/%d/fd" % pid), key=int):
        fd = libc.syscall(PIDFD_GETFD, pidfd, int(name), 0)
        if fd < 0:
            continue
        try:
            taken[int(name)] = socket.socket(fileno=fd)
        except OSError:
            os.close(fd)
    return taken

def send_bounded(sock, data, seconds):
    # MSG_DONTWAIT: the descriptor is shared with the relay, whose own flags must stay as they are.
    sent, deadline = 0, time.monotonic() + seconds
    while sent < len(data) and time.monotonic() < deadline:
        try:
            sent += sock.send(data[sent:sent + 65536], socket.MSG_DONTWAIT)
        except BlockingIOError:
            select.select([], [sock], [], 0.2)
        except OSError:
            break
    return sent

def stop(pid):
    # SIGSTOP takes effect only when each thread next runs: until all show "T", one may still accept.
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        states = []
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/stat" % (pid, task)) as stat:
                states.append(stat.read().rsplit(")", 1)[1].split()[0])
        if all(state in ("T", "t") for state in states):
            return
        time.sleep(0.01)
    sys.exit("the relay did not stop")

mode, pid = sys.argv[1], int(sys.argv[2])
if mode == "write":
    emulator, data = int(sys.argv[3]), open(sys.argv[4], "rb").read()
    written = {}
    for fd, sock in take_all(pid).items():
        try:
            if sock.family != socket.AF_UNIX:
                continue
            sock.getpeername()
            if struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0] != emulator:
                continue
        except OSError:
            continue
        written[fd] = send_bounded(sock, data, 1)
    print(json.dumps(written), flush=True)
else:
    stop(pid)
    listeners = [s for s in take_all(pid).values() if s.getsockopt(socket.SOL_SOCKET, SO_ACCEPTCONN)]
    if not listeners:
        sys.exit("the relay has no listening socket")
    listener = listeners[0]
    listener.settimeout(float(sys.argv[3]))
    print("ready", flush=True)
    for path in sys.argv[4:]:
        conn, _ = listener.accept()
        conn.settimeout(5)
        request = conn.recv(64)
        send_bounded(conn, open(path, "rb").read(), 3)
        conn.close()
        print("answered %r" % request, flush=True)
`;

/** The network namespace of a guest: that of a process whose root holds the guest's /etc/hostname. */
async function guestNetworkNamespace(guest: Guest): Promise<string> {
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const hostname = await readFile(`/proc/${entry}/root/etc/hostname`, "utf8").catch(() => "");
    if (hostname === `${guest.name}\n`) return readlink(`/proc/${entry}/ns/net`);
  }
  throw new Error(`no process of guest ${guest.name} found`);
}

/** The pid of the guest's port relay: the process running port-relay.* in the guest's network namespace. */
export async function relayPidOf(guest: Guest): Promise<number> {
  const namespace = await guestNetworkNamespace(guest);
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (!commandLine.split("\0").some((argument) => /\/port-relay\.(mjs|py)$/.test(argument))) continue;
    if ((await readlink(`/proc/${entry}/ns/net`).catch(() => "")) === namespace) return Number(entry);
  }
  throw new Error(`guest ${guest.name} has no port relay`);
}

function runHelper(args: string[], onLine?: (line: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(HOST_PYTHON, ["-I", "-c", program, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      stdout += text;
      for (const line of text.split("\n")) if (line) onLine?.(line);
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`relay hijack exited ${code}: ${stderr}`)),
    );
  });
}

async function withPayloadFiles<T>(payloads: Buffer[], use: (paths: string[]) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "lab-relay-hijack-"));
  try {
    const paths = payloads.map((_, index) => join(dir, String(index)));
    await Promise.all(payloads.map((payload, index) => writeFile(paths[index] ?? "", payload)));
    return await use(paths);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Writes `payload` into each of the relay's channels to this process; returns fd -> bytes written. */
export function writeAsRelay(relayPid: number, payload: Buffer): Promise<Record<string, number>> {
  return withPayloadFiles([payload], async ([path]) =>
    JSON.parse(await runHelper(["write", String(relayPid), String(process.pid), path ?? ""])),
  );
}

/**
 * Stops the relay and answers its next `payloads.length` connections with them, in order. Resolves
 * `ready` once it listens in the relay's place, `done` when every payload went out.
 */
export function answerAsRelay(
  relayPid: number,
  payloads: Buffer[],
): { ready: Promise<void>; done: Promise<string> } {
  // Each connection comes when the test makes it: on a busy machine that may take a while.
  const acceptWithinMs = patient(10_000);
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const done = withPayloadFiles(payloads, (paths) =>
    runHelper(["answer", String(relayPid), String(acceptWithinMs / 1000), ...paths], (line) =>
      line === "ready" ? markReady() : undefined,
    ),
  );
  return { ready: Promise.race([ready, done.then(() => undefined)]), done };
}
