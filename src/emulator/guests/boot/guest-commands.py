#!/run/lab-guest/bin/python3 -IS
# Commands of an emulated guest that the emulator provides itself, mounted over the image's own
# (guest-bin.ts), run by the host's python3 so that they work on images without python3:
#   systemctl, journalctl   clients of the emulated service manager (guest_system/)
#   poweroff, shutdown      systemctl poweroff, as systemd's own links to systemctl are
#   dnf, yum, apt, apt-get  the image's package manager, failing as it does without network
# The request to the manager is the tool's name and arguments, NUL-separated; the answer is records of
# a kind byte (o: stdout, e: stderr, c: exit code), a decimal length, ':' and the bytes.
import os
import socket
import sys

BOOT_DIR = "/run/lab-guest"
CONTROL_SOCKET = "/run/systemd/private"


def request(tool, args):
    """Sends a request to the service manager, copies its output through, returns its exit code."""
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(CONTROL_SOCKET)
    client.sendall(b"\0".join(arg.encode("utf-8", "surrogateescape") for arg in [tool] + args))
    client.shutdown(socket.SHUT_WR)
    buffer = b""
    code = 1
    while True:
        data = client.recv(65536)
        if not data:
            break
        buffer += data
        while True:
            colon = buffer.find(b":")
            if colon < 1:
                break
            length = int(buffer[1:colon])
            if len(buffer) < colon + 1 + length:
                break
            kind, payload = buffer[:1], buffer[colon + 1 : colon + 1 + length]
            buffer = buffer[colon + 1 + length :]
            if kind == b"o":
                sys.stdout.buffer.write(payload)
                sys.stdout.flush()
            elif kind == b"e":
                sys.stderr.buffer.write(payload)
                sys.stderr.flush()
            elif kind == b"c":
                code = int(payload)
    client.close()
    return code


def client(tool):
    try:
        return request(tool, sys.argv[1:])
    except (OSError, ValueError):
        sys.stderr.write(
            "System has not been booted with systemd as init system (PID 1). Can't operate.\n"
            "Failed to connect to bus: Host is down\n"
        )
        return 1


def package_manager(tool):
    # What dnf and apt print when they cannot resolve their repositories' host names.
    import json

    try:
        with open(BOOT_DIR + "/image.json", encoding="utf-8") as handle:
            image = json.load(handle)
    except (OSError, ValueError):
        image = {}
    repo = image.get("repository") or {
        "id": "base",
        "url": "https://mirror.example/",
        "host": "mirror.example",
    }
    argv = sys.argv[1:]
    args = [arg for arg in argv if not arg.startswith("-")]
    if "--version" in argv or "-h" in argv or "--help" in argv:
        sys.stdout.write("%s (emulated: this guest has no network)\n" % tool)
        return 0
    # Without root the emulator gives a guest one uid, which is then also its root.
    root = os.getuid() == 0 or image.get("privileged") is False
    verb = args[0] if args else ""
    if tool in ("apt", "apt-get"):
        changes = ("install", "upgrade", "dist-upgrade", "full-upgrade", "remove", "purge", "update", "autoremove")
        if verb in changes and not root:
            sys.stderr.write(
                "E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)\n"
                "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), are you root?\n"
            )
            return 100
        if verb == "update":
            sys.stdout.write(
                "Err:1 %s %s InRelease\n  Temporary failure resolving '%s'\nReading package lists... Done\n"
                % (repo["url"].rstrip("/"), repo["id"], repo["host"])
            )
            sys.stderr.write(
                "W: Failed to fetch %sdists/%s/InRelease  Temporary failure resolving '%s'\n"
                "W: Some index files failed to download. They have been ignored, or old ones used instead.\n"
                % (repo["url"], repo["id"], repo["host"])
            )
            return 0
        sys.stdout.write("Reading package lists... Done\n")
        if verb == "install" and len(args) > 1:
            sys.stdout.write("Building dependency tree... Done\n")
            sys.stderr.write("E: Unable to locate package %s\n" % args[1])
            return 100
        return 0
    changes = ("install", "upgrade", "update", "remove", "makecache", "reinstall", "downgrade")
    if verb in changes and not root:
        sys.stderr.write(
            "This command has to be run with superuser privileges (under the root user on most systems).\n"
        )
        return 1
    sys.stdout.write("Updating and loading repositories:\n")
    sys.stderr.write(
        ">>> Curl error (6): Couldn't resolve host name for %s [Could not resolve host: %s]\n"
        'Failed to download metadata (metalink: "%s") for repository "%s"\n'
        % (repo["url"], repo["host"], repo["url"], repo["id"])
    )
    return 1


def power(tool):
    """poweroff, and shutdown for now (a shutdown scheduled for later is not emulated)."""
    argv = sys.argv[1:]
    if tool == "shutdown":
        times = [arg for arg in argv if not arg.startswith("-")]
        if "-r" in argv or "--reboot" in argv or (times and times[0] not in ("now", "+0")):
            sys.stderr.write("shutdown: this emulated guest powers off now only (shutdown now)\n")
            return 1
    elif argv and argv[0] not in ("-f", "--force", "-p", "--poweroff", "--no-wall"):
        sys.stderr.write("poweroff: unrecognized option '%s'\n" % argv[0])
        return 1
    try:
        return request("systemctl", ["poweroff"])
    except (OSError, ValueError):
        return client("systemctl")


def main():
    tool = os.path.basename(sys.argv[0])
    if tool in ("systemctl", "journalctl"):
        return client(tool)
    if tool in ("poweroff", "shutdown"):
        return power(tool)
    if tool in ("dnf", "dnf5", "dnf-3", "yum", "apt", "apt-get"):
        return package_manager(tool)
    sys.stderr.write(
        "guest-commands: run as systemctl, journalctl, poweroff, shutdown or a package manager, not %s\n" % tool
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
