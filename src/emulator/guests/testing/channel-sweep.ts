// Test helper: a console command that tries, as whoever types it, what the security review's grab.py
// did to the port relay, on every process of the guest: take each of its file descriptors with
// pidfd_getfd(2) and keep those that are connected Unix sockets whose peer lives outside the guest's
// pid namespace (SO_PEERCRED then names pid 0), i.e. channels to the emulator. The serial line is
// left out (any process's descriptor 0, 1 or 2, wherever else it was duplicated, e.g. the service
// manager's copy for boot messages): it carries raw bytes by design. Prints a JSON list of
// "command line: fd N"; an empty list means there was nothing to take.
const program = String.raw`import ctypes, json, os, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
PIDFD_OPEN, PIDFD_GETFD = 434, 438
pids = [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]
serial = set()
for pid in pids:
    for fd in (0, 1, 2):
        try:
            serial.add(os.readlink("/proc/%d/fd/%d" % (pid, fd)))
        except OSError:
            pass
found = []
for pid in pids:
    if pid == os.getpid():
        continue
    try:
        fds = sorted(int(fd) for fd in os.listdir("/proc/%d/fd" % pid))
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            command = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        continue
    pidfd = libc.syscall(PIDFD_OPEN, pid, 0)
    if pidfd < 0:
        continue
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%d" % (pid, fd)) in serial:
                continue
        except OSError:
            continue
        taken = libc.syscall(PIDFD_GETFD, pidfd, fd, 0)
        if taken < 0:
            continue
        try:
            sock = socket.socket(fileno=taken)
        except OSError:
            os.close(taken)
            continue
        try:
            if sock.family == socket.AF_UNIX:
                sock.getpeername()
                creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
                if struct.unpack("3i", creds)[0] == 0:
                    found.append("%s: fd %d" % (command, fd))
        except OSError:
            pass
        finally:
            sock.close()
    os.close(pidfd)
print(json.dumps(found))
`;

/** The command; its output is one line of JSON. */
export function channelSweepCommand(): string {
  const encoded = Buffer.from(program).toString("base64");
  return `echo ${encoded} | base64 -d > /tmp/channel-sweep.py && python3 /tmp/channel-sweep.py`;
}
