# The port relay of one guest: port-forward's way into a guest whose network is its loopback alone.
# The emulator starts one per guest (port-relay.ts) outside the guest's sandbox, and it enters the
# guest's network namespace only (handed over as fd 3): no process of the guest can see it, trace it
# or take its descriptors, whatever uid the guest has. Then it drops every privilege it had.
#
# It listens on a Unix socket in the emulator's own folder, which guests do not see. On each
# connection the emulator sends the port, as digits and a newline; the relay connects to
# 127.0.0.1:PORT inside the guest, answers one line, "ok" or "error CODE MESSAGE", and then copies
# bytes both ways until both sides have ended. Its stdout says "ready" once, when it accepts
# connections; stdin closing (the emulator is gone) ends it.
#
# Standard library only, Python 3.9+. Arguments: the socket's path, and the uid to run as when started
# as root, or "-".
import ctypes
import errno
import os
import signal
import socket
import sys
import threading

CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
NS_GET_USERNS = 0xB701
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
LINUX_CAPABILITY_VERSION_3 = 0x20080522
NETWORK_NAMESPACE_FD = 3
# "65535\n" and no more: the emulator's request.
REQUEST_MAX = 6
REQUEST_TIMEOUT_S = 10
CONNECT_TIMEOUT_S = 10
# Connections at once; more are answered with an error rather than a thread each.
CONNECTIONS_MAX = 256

libc = ctypes.CDLL(None, use_errno=True)


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def check(result, what):
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, "%s: %s" % (what, os.strerror(code)))
    return result


def enter_network(netns):
    # setns(2) into a network namespace needs CAP_SYS_ADMIN over the user namespace that owns it. Run
    # by an ordinary user, that is the guest's outer user namespace, whose owner (the emulator's uid,
    # ours) holds every capability in it once it enters; as root it is our own.
    owner = check(libc.ioctl(netns, NS_GET_USERNS), "the owner of the guest's network namespace")
    mine = os.stat("/proc/self/ns/user")
    theirs = os.fstat(owner)
    if (theirs.st_dev, theirs.st_ino) != (mine.st_dev, mine.st_ino):
        check(libc.setns(owner, CLONE_NEWUSER), "entering the guest's user namespace")
    os.close(owner)
    check(libc.setns(netns, CLONE_NEWNET), "entering the guest's network namespace")
    os.close(netns)


def drop_privileges(uid):
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        # Leaving uid 0 clears every capability.
        os.setresuid(uid, uid, uid)
    else:
        # Root of the guest's outer user namespace: give up the capabilities that came with entering it.
        data = (CapData * 2)()
        check(libc.capset(ctypes.byref(CapHeader(LINUX_CAPABILITY_VERSION_3, 0)), data), "capset")
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    # Not dumpable: nobody of our uid may ptrace us or take our descriptors (pidfd_getfd).
    check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "dumpable")


def shut(sock, how):
    try:
        sock.shutdown(how)
    except OSError:
        pass


def answer(conn, line):
    printable = "".join(c if " " <= c <= "~" else "?" for c in line)[:400]
    conn.sendall((printable + "\n").encode("ascii"))


def read_port(conn):
    # A byte at a time: what follows the line is the guest's, not ours to read.
    request = b""
    while not request.endswith(b"\n"):
        if len(request) >= REQUEST_MAX:
            return None
        byte = conn.recv(1)
        if not byte:
            return None
        request += byte
    digits = request[:-1]
    if not digits.isdigit() or not 0 < int(digits) < 65536:
        return None
    return int(digits)


def pump(source, sink, pair):
    ended = False
    try:
        while True:
            data = source.recv(65536)
            if not data:
                ended = True
                break
            sink.sendall(data)
    except OSError:
        pass
    if ended:
        shut(sink, socket.SHUT_WR)
    else:
        # A reset or a failed write ends both directions, so the other copy does not wait forever.
        for sock in pair:
            shut(sock, socket.SHUT_RDWR)


def serve(conn, slots):
    target = None
    try:
        conn.settimeout(REQUEST_TIMEOUT_S)
        port = read_port(conn)
        if port is None:
            return
        # Not create_connection: its name lookup imports the idna codec on first use, which may lie
        # where the dropped uid cannot read.
        target = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        target.settimeout(CONNECT_TIMEOUT_S)
        try:
            target.connect(("127.0.0.1", port))
        except socket.timeout:
            answer(conn, "error ETIMEDOUT connecting to port %d timed out" % port)
            return
        except OSError as error:
            answer(conn, "error %s %s" % (errno.errorcode.get(error.errno, "EIO"), error.strerror or error))
            return
        answer(conn, "ok")
        conn.settimeout(None)
        target.settimeout(None)
        pair = (conn, target)
        inbound = threading.Thread(target=pump, args=(conn, target, pair), daemon=True)
        inbound.start()
        pump(target, conn, pair)
        inbound.join()
    except OSError:
        pass
    finally:
        for sock in (conn, target):
            if sock is not None:
                sock.close()
        slots.release()


def exit_when_stdin_closes():
    while os.read(0, 4096):
        pass
    os._exit(0)


def main(path, uid):
    parent = os.getppid()
    # The emulator manages our life (stdin, a parent-death signal); a Ctrl-C in its terminal is its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.umask(0o077)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    enter_network(NETWORK_NAMESPACE_FD)
    drop_privileges(uid)
    # After the uid change, which clears it; then the parent must still be the one that started us.
    check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death signal")
    if os.getppid() != parent:
        os._exit(0)
    threading.stack_size(256 * 1024)
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    slots = threading.BoundedSemaphore(CONNECTIONS_MAX)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        try:
            conn, _ = listener.accept()
        except OSError as error:
            sys.stderr.write("port-relay: accept: %s\n" % error)
            sys.stderr.flush()
            threading.Event().wait(0.1)
            continue
        if not slots.acquire(blocking=False):
            try:
                answer(conn, "error EMFILE the relay has %d connections open already" % CONNECTIONS_MAX)
            except OSError:
                pass
            conn.close()
            continue
        threading.Thread(target=serve, args=(conn, slots), daemon=True).start()


if __name__ == "__main__":
    try:
        main(sys.argv[1], None if sys.argv[2] == "-" else int(sys.argv[2]))
    except (OSError, IndexError, ValueError) as error:
        sys.stderr.write("port-relay: %s\n" % (error,))
        sys.exit(1)
