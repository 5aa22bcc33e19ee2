#!/usr/bin/python3
"""Lab Console's lab agent in the student's VM: checks, terminals, files, activity, claims (docs/agent.md).

One file, Python 3.9 or newer, nothing beyond the standard library: every image that runs
cloud-init has python3, because cloud-init is written in it. The BFF reaches this agent through
KubeVirt's portforward subresource. Each request is signed with the session's key and each answer
is signed back over the request's nonce, so the key never crosses the wire and nothing that lacks
it can pass for this agent.
"""

import errno
import fcntl
import hashlib
import hmac
import json
import os
import pwd
import re
import select
import selectors
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import traceback
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

# 2.1.0 added /v1/files, 2.2.0 added /v1/terminal, 2.3.0 added /v1/activity; the BFF reads this from
# /v1/health to tell an agent that lacks them.
VERSION = "2.3.0"

# The limits of the wire protocol; src/common/agent-protocol.ts holds the same numbers.
BODY_BYTES = 64 * 1024
CHECKS_PER_REQUEST = 100
CHECK_ID_LENGTH = 100
COMMAND_LENGTH = 16 * 1024
TIMEOUT_SECONDS = 3600
OUTPUT_BYTES = 64 * 1024
CONCURRENT_CHECKS = 4
TTY_SIZE = 1000
# Files in and out of the home (docs/files.md): the largest one, the bytes each signed frame carries,
# and the longest path.
FILE_BYTES = 32 * 1024 * 1024
FILE_CHUNK_BYTES = 64 * 1024
FILE_PATH_LENGTH = 1024
FRAME_MAC_BYTES = 32
# A file's bytes may take as long as they need, but not pause for longer than this.
FILE_IDLE_SECONDS = 10
# Interactive terminals (/v1/terminal): how many may be open at once, and the most bytes one frame
# carries either way. Each also holds one of the CONNECTIONS while it is open.
TERMINALS = 8
TERMINAL_FRAME_BYTES = 64 * 1024
TERMINAL_PROTOCOL = "lab-agent-terminal"
# A frame is mac (FRAME_MAC_BYTES) | type (1 byte) | payload length (4 bytes, big-endian) | payload.
TERMINAL_HEAD = struct.Struct(">BI")
TERMINAL_HEAD_BYTES = FRAME_MAC_BYTES + TERMINAL_HEAD.size
# Frame types from the BFF ("in") ...
TERMINAL_INPUT = 0x01
TERMINAL_RESIZE = 0x02
TERMINAL_PING = 0x04
# ... and to it ("out").
TERMINAL_OUTPUT = 0x01
TERMINAL_EXIT = 0x03
TERMINAL_PONG = 0x05
# Once the BFF left and the PTY is closed (the kernel hangs the shell up), the shell's process group
# has this long to end before it is killed.
TERMINAL_HANGUP_SECONDS = 2.0
# After a terminal's shell exited, how long its PTY may stay silent before the terminal ends anyway:
# a background job may hold the PTY open for ever.
TERMINAL_DRAIN_SECONDS = 1.0
# The BFF sends a ping every 25 s, also while it does not read: a terminal that has heard no frame at
# all for this long (over three pings missed) has lost its BFF, and ends as if the BFF had left. Without
# it a BFF gone without a FIN would hold its terminal, its connection and its shell for ever.
TERMINAL_IDLE_SECONDS = 90
# Input the program on the PTY has not read yet waits in the agent up to this much. The BFF's frames
# are read on meanwhile, so its pings are answered; a BFF that types on past this into a program that
# never reads is cut.
TERMINAL_INPUT_BYTES = 1024 * 1024
# TCP keepalive on a terminal's connection, where the platform has the options: the first probe after
# 60 s of silence, then one every 10 s, 3 unanswered ones end it.
TERMINAL_KEEPALIVE = (("TCP_KEEPIDLE", 60), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 3))
# How often a running shell is looked at: it may exit while a background job still holds the PTY,
# and then the PTY never reports its end.
SHELL_POLL_SECONDS = 1.0

# A key file larger than this is not a key: reading stops here, whatever the file is.
KEY_FILE_BYTES = 256
MINIMUM_KEY_LENGTH = 16
# Enough of stdout's end to hold its last line, where a score line is read.
STDOUT_TAIL_BYTES = 4096
# After a check's command exits, how long its pipes may stay open: a process that left the check's
# process group (setsid, a daemon) could hold them for ever.
DRAIN_SECONDS = 1.0
# Nonces seen recently: a captured request cannot be played again while it is remembered.
REMEMBERED_NONCES = 4096
CONNECTIONS = 32
# Reading a request (line, headers, body) must not take longer than this, in all.
REQUEST_READ_SECONDS = 10
# The request line and headers together; the body has BODY_BYTES of its own.
HEAD_BYTES = 16 * 1024
# Checks run with this primary group (nobody's), the student's own groups as supplementary ones. The
# kernel lets a process open another's /proc/PID/fd or ptrace it only when its uid AND gid match, so
# the student's own programs cannot write a score line into a running check or rewrite it.
CHECK_GID = 65534

CHECK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DEFAULTS = {
    "host": "0.0.0.0",
    "port": "899",
    "keyFile": "/etc/lab-agent/key",
    "user": "student",
    "home": None,
    "tty": "/dev/ttyS0",
}
SETTINGS = [
    ("host", "--host", "LAB_AGENT_HOST", "address to listen on (default 0.0.0.0)"),
    ("port", "--port", "LAB_AGENT_PORT", "TCP port, 0 = any free one (default 899)"),
    ("keyFile", "--key-file", "LAB_AGENT_KEY_FILE", "the session key (default /etc/lab-agent/key)"),
    ("user", "--user", "LAB_AGENT_USER", "account checks run as, when root (default student)"),
    ("home", "--home", "LAB_AGENT_HOME", "directory checks run in (default: the user's home)"),
    ("tty", "--tty", "LAB_AGENT_TTY", "serial terminal for /v1/tty (default /dev/ttyS0)"),
]
DEFAULT_CONFIG_FILE = "/etc/lab-agent/config.json"
USAGE = "\n".join(
    [
        "Usage: lab_agent.py [--config FILE] [options]",
        "",
        "Options (each also settable as a LAB_AGENT_* variable or a key of the JSON config file):",
        "  --config FILE        JSON config file, env LAB_AGENT_CONFIG (default %s, if present)"
        % DEFAULT_CONFIG_FILE,
    ]
    + ["  %-20s %s, env %s" % (flag + " VALUE", text, env) for _, flag, env, text in SETTINGS]
    + ["  --help               show this text"]
)

AUTHORIZATION = re.compile(r"^Lab-Agent-HMAC nonce=([0-9a-f]{32}), mac=([0-9a-f]{64})$")
SCORE_LINE = re.compile(r"^score=([0-9]+(?:\.[0-9]+)?|\.[0-9]+)$")


class HttpError(Exception):
    def __init__(self, status, code, message, signed=True):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        # False for the answers given before the request proved it holds the key.
        self.signed = signed


class ConfigError(Exception):
    def __init__(self, problems):
        super().__init__("Invalid lab-agent configuration:\n  " + "\n  ".join(problems))


# ---------------------------------------------------------------------------------------------
# Settings: flags win over LAB_AGENT_* variables, which win over the config file and the defaults.


def load_config(argv, env):
    problems = []
    flags = parse_flags(argv, problems)
    named = flags.get("--config", env.get("LAB_AGENT_CONFIG"))
    from_file = read_config_file(named or DEFAULT_CONFIG_FILE, named is not None, problems)
    config = dict(DEFAULTS)
    for key, flag, env_name, _ in SETTINGS:
        value = flags.get(flag, env.get(env_name, from_file.get(key)))
        if value is None:
            continue
        if str(value).strip() == "":
            problems.append("%s must not be empty." % key)
        config[key] = str(value)
    port = config["port"]
    if not re.fullmatch(r"\d{1,5}", port) or int(port) > 65535:
        problems.append('port must be a whole number from 0 to 65535, not "%s".' % port)
    if problems:
        raise ConfigError(problems)
    config["port"] = int(port)
    return config


def parse_flags(argv, problems):
    known = {"--config"} | {flag for _, flag, _, _ in SETTINGS}
    flags = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, has_value, value = arg.partition("=")
        if name not in known:
            problems.append('Unknown argument "%s" (see --help).' % arg)
            continue
        if not has_value:
            if not args:
                problems.append("%s needs a value." % name)
                continue
            value = args.pop(0)
        flags[name] = value
    return flags


def read_config_file(path, required, problems):
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read(BODY_BYTES)
    except OSError as error:
        if required or error.errno != errno.ENOENT:
            problems.append("Cannot read config file %s: %s" % (path, error.strerror))
        return {}
    try:
        parsed = json.loads(text)
    except ValueError as error:
        problems.append("Config file %s is not valid JSON: %s" % (path, error))
        return {}
    if not isinstance(parsed, dict):
        problems.append("Config file %s must hold a JSON object." % path)
        return {}
    keys = {key for key, _, _, _ in SETTINGS}
    values = {}
    for key, value in parsed.items():
        if key not in keys:
            problems.append('Config file %s: unknown key "%s".' % (path, key))
        elif isinstance(value, bool) or not isinstance(value, (str, int)):
            problems.append('Config file %s: "%s" must be a string or a number.' % (path, key))
        else:
            values[key] = str(value)
    return values


# ---------------------------------------------------------------------------------------------
# The session key and the signatures.


def read_key(path):
    """Opened without following links, only a regular file, never more than KEY_FILE_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        reason = "it is a symbolic link" if error.errno == errno.ELOOP else error.strerror
        raise HttpError(503, "no_key", "The agent has no key yet (%s: %s)." % (path, reason), False)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise HttpError(503, "no_key", "The key file %s is not a regular file." % path, False)
        if os.geteuid() == 0 and (info.st_uid != 0 or info.st_mode & 0o077):
            raise HttpError(503, "no_key", "The key file %s must be root's, mode 0600." % path, False)
        data = os.read(fd, KEY_FILE_BYTES + 1)
    finally:
        os.close(fd)
    key = data.decode("utf-8", "replace").strip()
    if len(data) > KEY_FILE_BYTES or len(key) < MINIMUM_KEY_LENGTH:
        raise HttpError(503, "no_key", "The key file %s holds no usable key." % path, False)
    return key.encode("utf-8")


def claim_pad(key, nonce):
    """The one-time pad a claim's new key is sealed with: only the holder of the current key has it."""
    return hmac.new(key, ("lab-agent-claim:v1\n" + nonce).encode("utf-8"), hashlib.sha256).digest()


def unseal_key(key, nonce, sealed):
    try:
        raw = bytes.fromhex(sealed) if isinstance(sealed, str) else b""
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise invalid(['"key" must be 64 hexadecimal digits: a sealed 32-byte key.'])
    return bytes(a ^ b for a, b in zip(raw, claim_pad(key, nonce))).hex().encode("utf-8")


def replace_key(path, key):
    """Writes the new key beside the old one and renames it over: a crash leaves one whole key file."""
    folder = os.path.dirname(path) or "."
    temporary = os.path.join(folder, ".key.%d" % os.getpid())
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, key + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(temporary, path)


def mac(key, lines):
    return hmac.new(key, "\n".join(lines).encode("utf-8"), hashlib.sha256).hexdigest()


def request_mac(key, method, target, nonce, body):
    return mac(key, ["lab-agent-request:v2", method, target, nonce, hashlib.sha256(body).hexdigest()])


def answer_mac(key, nonce, status, body):
    return mac(key, ["lab-agent-response:v2", nonce, str(status), hashlib.sha256(body).hexdigest()])


def stream_request_mac(key, method, target, nonce, size):
    """A streamed body cannot be hashed before it is read: the request signs its size instead."""
    return mac(key, ["lab-agent-stream-request:v1", method, target, nonce, str(size)])


def stream_answer_mac(key, nonce, status, size):
    return mac(key, ["lab-agent-stream-response:v1", nonce, str(status), str(size)])


def frame_mac(key, kind, nonce, index, data):
    """Each frame of a streamed body carries the MAC of its bytes, its place and its request."""
    prefix = ("%s\n%s\n%d\n" % (kind, nonce, index)).encode("utf-8")
    return hmac.new(key, prefix + data, hashlib.sha256).digest()


def framed_length(size):
    frames = (size + FILE_CHUNK_BYTES - 1) // FILE_CHUNK_BYTES
    return size + frames * FRAME_MAC_BYTES


class NonceMemory:
    def __init__(self, size):
        self.size = size
        self.seen = OrderedDict()
        self.lock = threading.Lock()

    def first_use(self, nonce):
        with self.lock:
            if nonce in self.seen:
                return False
            self.seen[nonce] = True
            if len(self.seen) > self.size:
                self.seen.popitem(last=False)
            return True


# ---------------------------------------------------------------------------------------------
# Whom checks run as.


class RunAs:
    def __init__(self, user, uid, gid, groups, home, switch, own_gid):
        self.user = user
        self.uid = uid
        self.gid = gid
        # The user's own primary group: files written into the home get it, as the student's would.
        self.own_gid = own_gid
        self.groups = groups
        self.home = home
        # True when the agent is root and the checks' user is not.
        self.switch = switch


def resolve_run_as(config):
    """Per request, not at start-up: cloud-init may create the account after the agent started."""
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(config["user"])
        except KeyError:
            raise HttpError(503, "run_as_unavailable", 'There is no user "%s" (yet).' % config["user"])
        groups = os.getgrouplist(entry.pw_name, entry.pw_gid)
        switch = entry.pw_uid != 0
        gid = CHECK_GID if switch else entry.pw_gid
        run_as = RunAs(entry.pw_name, entry.pw_uid, gid, groups, entry.pw_dir, switch, entry.pw_gid)
    else:
        entry = pwd.getpwuid(os.geteuid())
        run_as = RunAs(entry.pw_name, entry.pw_uid, entry.pw_gid, [], entry.pw_dir, False, entry.pw_gid)
    if config["home"] is not None:
        run_as.home = config["home"]
    if not os.path.isdir(run_as.home):
        raise HttpError(
            503,
            "run_as_unavailable",
            'The home directory %s of user "%s" does not exist.' % (run_as.home, run_as.user),
        )
    return run_as


def run_as_mismatch(config):
    if os.geteuid() == 0 or config["user"] == DEFAULTS["user"]:
        return None
    me = pwd.getpwuid(os.geteuid()).pw_name
    if config["user"] == me:
        return None
    return 'lab-agent: not running as root, so checks run as "%s", not "%s".' % (me, config["user"])


# ---------------------------------------------------------------------------------------------
# Checks.


class RunningGroups:
    """The process groups of running checks, so that a stopping agent leaves none behind."""

    def __init__(self, parent=None):
        self.pids = set()
        self.lock = threading.Lock()
        # Checks are counted here and in the agent's set of every group (terminals too).
        self.parent = parent
        # Held while a group starts and is counted, and while a stopping agent kills them all: a
        # SIGTERM between a start and its count would leave that group running (one set shares it).
        self.spawning = parent.spawning if parent is not None else threading.Lock()

    def spawn(self, start):
        """Starts a process group with start() and counts it, as one step."""
        with self.spawning:
            child = start()
            self.add(child.pid)
        return child

    def add(self, pid):
        with self.lock:
            self.pids.add(pid)
        if self.parent is not None:
            self.parent.add(pid)

    def remove(self, pid):
        with self.lock:
            self.pids.discard(pid)
        if self.parent is not None:
            self.parent.remove(pid)

    def contains(self, pid):
        with self.lock:
            return pid in self.pids

    def kill_all(self):
        with self.spawning, self.lock:
            for pid in list(self.pids):
                kill_group(pid)


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass  # ESRCH: the group is already gone.


class Tail:
    """The last `limit` bytes of a stream: when a check floods its output, the end says most."""

    def __init__(self, limit):
        self.limit = limit
        self.data = bytearray()
        self.truncated = False

    def push(self, chunk):
        self.data += chunk
        if len(self.data) > self.limit:
            del self.data[: len(self.data) - self.limit]
            self.truncated = True

    def text(self):
        data = bytes(self.data)
        if self.truncated:
            # The cut may land inside a UTF-8 character: skip its continuation bytes (10xxxxxx).
            start = 0
            while start < 3 and start < len(data) and (data[start] & 0xC0) == 0x80:
                start += 1
            data = data[start:]
        return data.decode("utf-8", "replace")


def score_of(stdout):
    lines = stdout.rstrip().split("\n")
    match = SCORE_LINE.match(lines[-1].strip()) if lines else None
    if not match:
        return None
    score = float(match.group(1))
    return score if score <= 1 else None


def clean_environment(run_as, shell, **more):
    """Only what a program of the student's needs: nothing of the agent's own environment."""
    env = {
        "HOME": run_as.home,
        "USER": run_as.user,
        "LOGNAME": run_as.user,
        "SHELL": shell,
        "PATH": CHECK_PATH,
        "LANG": "C.UTF-8",
    }
    env.update(more)
    return env


def child_setup(run_as, gid, controlling_terminal=False):
    """
    What a check's or a terminal's forked child does before exec. The agent's unit has
    OOMScoreAdjust=-900 (agent-delivery.ts) and children inherit it: a memory hog in a student's
    terminal or check would be the last thing the kernel kills. So the child sets 0 first, while it is
    still root, and only then becomes the user. Not with Popen's user=, group= and extra_groups: those
    switch before any preexec_fn runs, and a process that changed its uid may not write its own /proc
    files until it execs (they are root's then). Root's write (CAP_SYS_RESOURCE) also makes 0 the
    lowest score the student may set again, so -900 cannot be put back.
    """
    switch, uid, groups = run_as.switch, run_as.uid, list(run_as.groups)

    def setup():
        # Runs in the forked child, after setsid, just before exec. With other threads about, nothing
        # here may take a lock: system calls on what was computed before the fork.
        try:
            fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
        except OSError:
            pass  # a kernel without it, or an agent not root that may not lower a score set above 0
        if switch:
            os.setgroups(groups)
            os.setregid(gid, gid)
            os.setreuid(uid, uid)
        if controlling_terminal:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # stdin is the PTY

    return setup


def check_launch(run_as, command):
    # A clean shell: no login shell and no rc file, so nothing the student wrote runs first.
    if os.access("/bin/bash", os.X_OK):
        argv, shell = ["/bin/bash", "--noprofile", "--norc", "-c", command], "/bin/bash"
    else:
        argv, shell = ["/bin/sh", "-c", command], "/bin/sh"
    # The same preparation as a terminal's shell: the score, then the user (checks with CHECK_GID).
    options = {
        "cwd": run_as.home,
        "env": clean_environment(run_as, shell),
        "preexec_fn": child_setup(run_as, run_as.gid),
    }
    return argv, options


def run_check(spec, run_as, cancelled, running):
    """
    The check runs in a session (and process group) of its own, so the timeout and the clean-up
    reach everything it started. Whatever is left of the group when the command exits is killed:
    checks observe, they leave nothing running.
    """
    argv, options = check_launch(run_as, spec["run"])
    started = time.monotonic()
    try:
        child = running.spawn(
            lambda: subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
                **options
            )
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise HttpError(500, "spawn_failed", 'Cannot start check "%s": %s' % (spec["id"], error))
    output = Tail(OUTPUT_BYTES)
    stdout_tail = Tail(STDOUT_TAIL_BYTES)
    deadline = started + spec["timeoutSeconds"]
    timed_out = False
    drain_until = None
    selector = selectors.DefaultSelector()
    selector.register(child.stdout, selectors.EVENT_READ, True)
    selector.register(child.stderr, selectors.EVENT_READ, False)
    try:
        # Until the command has exited and its pipes are drained (or given up on): a command that
        # closed its output early still meets its timeout.
        while drain_until is None or (selector.get_map() and time.monotonic() < drain_until):
            if selector.get_map():
                ready = selector.select(0.05)
            else:
                ready = []
                time.sleep(0.05)
            for key, _ in ready:
                chunk = os.read(key.fileobj.fileno(), 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                output.push(chunk)
                if key.data:
                    stdout_tail.push(chunk)
            if drain_until is None:
                if child.poll() is not None:
                    kill_group(child.pid)
                    drain_until = time.monotonic() + DRAIN_SECONDS
                elif time.monotonic() >= deadline or cancelled.is_set():
                    timed_out = timed_out or not cancelled.is_set()
                    kill_group(child.pid)
        child.wait()
        kill_group(child.pid)
    finally:
        running.remove(child.pid)
        selector.close()
        child.stdout.close()
        child.stderr.close()
    code = child.returncode
    return {
        "id": spec["id"],
        "exitCode": code if code >= 0 else None,
        "signal": signal_name(-code) if code < 0 else None,
        "timedOut": timed_out,
        "output": output.text(),
        "outputTruncated": output.truncated,
        "durationMs": round((time.monotonic() - started) * 1000),
        "score": score_of(stdout_tail.text()),
    }


def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return "SIG%d" % number  # real-time signals have no name


def parse_check_request(body):
    checks = body.get("checks") if isinstance(body, dict) else None
    if not isinstance(checks, list) or not 1 <= len(checks) <= CHECKS_PER_REQUEST:
        raise invalid(['"checks" must be a list of 1 to %d checks.' % CHECKS_PER_REQUEST])
    problems = []
    seen = set()
    for index, check in enumerate(checks):
        where = "checks[%d]" % index
        if not isinstance(check, dict):
            problems.append("%s must be an object." % where)
            continue
        check_id, run, timeout = check.get("id"), check.get("run"), check.get("timeoutSeconds")
        if not isinstance(check_id, str) or not 1 <= len(check_id) <= CHECK_ID_LENGTH:
            problems.append("%s.id must be a string of 1 to %d characters." % (where, CHECK_ID_LENGTH))
        elif check_id in seen:
            problems.append('%s.id "%s" appears twice.' % (where, check_id))
        else:
            seen.add(check_id)
        if not isinstance(run, str) or run.strip() == "" or len(run) > COMMAND_LENGTH:
            problems.append("%s.run must be a command of 1 to %d characters." % (where, COMMAND_LENGTH))
        if not is_number(timeout) or not 0 < timeout <= TIMEOUT_SECONDS:
            problems.append(
                "%s.timeoutSeconds must be a number above 0 and at most %d." % (where, TIMEOUT_SECONDS)
            )
    if problems:
        raise invalid(problems)
    return checks


def parse_tty_size(body):
    def is_size(value):
        return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= TTY_SIZE

    if not isinstance(body, dict) or not is_size(body.get("rows")) or not is_size(body.get("cols")):
        raise invalid(['"rows" and "cols" must be whole numbers from 1 to %d.' % TTY_SIZE])
    return {"rows": body["rows"], "cols": body["cols"]}


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def invalid(problems):
    return HttpError(400, "invalid", " ".join(problems))


def set_window_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def set_tty_size(tty, size):
    """The kernel sends SIGWINCH to the terminal's foreground programs, as `stty rows cols` would."""
    try:
        fd = os.open(tty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            set_window_size(fd, size["rows"], size["cols"])
        finally:
            os.close(fd)
    except OSError as error:
        raise HttpError(500, "tty_failed", "Cannot set the size of %s: %s" % (tty, error.strerror))


# ---------------------------------------------------------------------------------------------
# Files in and out of the home (docs/files.md). The agent is root, so it never opens a file of the
# home itself: a helper, this same file run as the student (--file-helper), does, and the data goes
# through its pipes. What the student cannot read stays unread, and what is written is the
# student's own.


def parse_file_path(text):
    """A path relative to the home, as its parts; `..` and absolute paths are refused outright."""
    if not isinstance(text, str) or not 1 <= len(text) <= FILE_PATH_LENGTH or "\0" in text:
        message = "The path must be 1 to %d characters, relative to the home folder." % FILE_PATH_LENGTH
        raise HttpError(400, "invalid_path", message)
    if text.startswith("/") or text.startswith("~"):
        raise HttpError(400, "invalid_path", 'The path "%s" must be relative to the home folder.' % text)
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise HttpError(400, "invalid_path", 'The path "%s" leaves the home folder ("..").' % text)
    if not parts:
        raise HttpError(400, "invalid_path", 'The path "%s" names no file.' % text)
    return parts


def inside_home(root, path, shown):
    """The real path of `path` (links followed), which must still lie in the home."""
    real = os.path.realpath(path)
    if real != root and not real.startswith(root + os.sep):
        raise HttpError(403, "outside_home", "%s leads outside the home folder (a symbolic link)." % shown)
    return real


def os_error(error, shown):
    if error.errno == errno.ENOENT:
        return HttpError(404, "no_such_file", "There is no file %s in the home folder." % shown)
    if error.errno in (errno.EACCES, errno.EPERM):
        return HttpError(403, "permission_denied", "The student may not open %s." % shown)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return HttpError(507, "disk_full", "The VM's disk is full: %s could not be written." % shown)
    if error.errno == errno.EISDIR:
        return HttpError(400, "not_a_file", "%s is a folder, not a file." % shown)
    return HttpError(500, "file_failed", "%s: %s" % (shown, error.strerror))


def megabytes(size):
    return "%.1f MiB" % (size / 1024 / 1024)


def helper_report(value):
    sys.stdout.buffer.write(json.dumps(value).encode("utf-8") + b"\n")
    sys.stdout.buffer.flush()


def helper_read(home, text):
    parts = parse_file_path(text)
    root = os.path.realpath(home)
    real = inside_home(root, os.path.join(root, *parts), text)
    try:
        # O_NONBLOCK: a FIFO planted under the name must not hang the download.
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise os_error(error, text)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise HttpError(400, "not_a_file", "%s is %s, not a file to download." % (text, what))
    with os.fdopen(fd, "rb", buffering=0) as file:
        if info.st_size > FILE_BYTES:
            sizes = (text, megabytes(info.st_size), megabytes(FILE_BYTES))
            raise HttpError(413, "too_large", "%s is %s; files up to %s can be downloaded." % sizes)
        helper_report({"size": info.st_size})
        left = info.st_size
        while left > 0:
            chunk = file.read(min(left, FILE_CHUNK_BYTES))
            if not chunk:
                return 1  # The file shrank meanwhile: the agent sees the bytes missing.
            sys.stdout.buffer.write(chunk)
            left -= len(chunk)
        sys.stdout.buffer.flush()
    return 0


def helper_write(home, text, size):
    parts = parse_file_path(text)
    root = os.path.realpath(home)
    folder_shown = "/".join(parts[:-1])
    folder = inside_home(root, os.path.join(root, *parts[:-1]), folder_shown or "The home folder")
    if not os.path.isdir(folder):
        raise HttpError(404, "no_such_folder", "There is no folder %s in the home folder." % folder_shown)
    target = inside_home(root, os.path.join(folder, parts[-1]), text)
    if os.path.isdir(target):
        raise HttpError(400, "not_a_file", "%s is a folder, not a file." % text)
    # A link in the home may lead to another folder of it: the file goes where the link leads.
    target_folder = os.path.dirname(target)
    space = os.statvfs(target_folder)
    free = space.f_bavail * space.f_frsize
    if size > free:
        sizes = (text, megabytes(size), megabytes(free))
        raise HttpError(507, "disk_full", "The VM's disk is full: %s needs %s, %s is free." % sizes)
    try:
        mode = os.stat(target).st_mode & 0o777  # a replaced script stays executable
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        name = "." + parts[-1][:64] + "."
        fd, temporary = tempfile.mkstemp(prefix=name, suffix=".upload", dir=target_folder)
    except OSError as error:
        raise os_error(error, text)
    try:
        with os.fdopen(fd, "wb", buffering=0) as file:
            os.fchmod(file.fileno(), mode)
            # Made with the helper's gid (nobody's): the student's own group, as the student's would.
            own_gid = pwd.getpwuid(os.getuid()).pw_gid
            if os.getegid() != own_gid:
                os.fchown(file.fileno(), -1, own_gid)
            helper_report({"ready": size})
            left = size
            while left > 0:
                chunk = sys.stdin.buffer.read(min(left, FILE_CHUNK_BYTES))
                if not chunk:
                    raise HttpError(400, "invalid", "The upload ended early.")
                file.write(chunk)
                left -= len(chunk)
        os.rename(temporary, target)
    except OSError as error:
        os.unlink(temporary)
        raise os_error(error, text)
    except BaseException:
        os.unlink(temporary)
        raise
    helper_report({"bytes": size})
    return 0


def file_helper(argv):
    """Runs as the student (FileHelper starts it): one read or write, answers as JSON lines."""
    try:
        if argv[0] == "read":
            return helper_read(argv[1], argv[2])
        return helper_write(argv[1], argv[2], int(argv[3]))
    except HttpError as error:
        helper_report({"error": {"status": error.status, "code": error.code, "message": error.message}})
        return 1


# What a helper may answer that the agent passes on: the student's programs cannot trace it (it runs
# with CHECK_GID), but it is the student's all the same, so the agent believes only what could be
# true. An error is one of these codes, with its own status and the agent's own words, built from the
# path the agent asked for and nothing the helper says.
HELPER_ERRORS = {
    "invalid_path": (400, lambda path: "The path %s is not one the home folder can have." % path),
    "outside_home": (403, lambda path: "%s leads outside the home folder (a symbolic link)." % path),
    "no_such_file": (404, lambda path: "There is no file %s in the home folder." % path),
    "no_such_folder": (
        404,
        lambda path: "There is no folder %s in the home folder." % (os.path.dirname(path) or "."),
    ),
    "permission_denied": (403, lambda path: "The student may not open %s." % path),
    "not_a_file": (400, lambda path: "%s is a folder or not a regular file." % path),
    "too_large": (413, lambda path: "%s is larger than %s, the most a file moved may be." % (path, megabytes(FILE_BYTES))),
    "disk_full": (507, lambda path: "The VM's disk is full: %s could not be written." % path),
    "invalid": (400, lambda path: "The upload of %s ended early." % path),
    "file_failed": (500, lambda path: "%s could not be moved." % path),
}


def helper_python():
    """The unit's interpreter: the agent's own may sit where the student cannot run it (a pyenv in
    root's home, in tests)."""
    return "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


class FileHelper:
    """The student's side of a file transfer: this file run as the student, in isolated mode."""

    def __init__(self, run_as, mode, path, size=0):
        script = os.path.abspath(__file__)
        self.path = path
        self.size = size
        self.home = run_as.home
        argv = [helper_python(), "-I", script, "--file-helper", mode, run_as.home, path, str(size)]
        options = {}
        if run_as.switch:
            # As a check runs: the student's uid, but nobody's gid, with the student's own groups as
            # supplementary ones, so the student's programs cannot ptrace it or open its pipes.
            options.update(user=run_as.uid, group=run_as.gid, extra_groups=run_as.groups)
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if mode == "write" else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                cwd="/",
                env={"PATH": CHECK_PATH, "LANG": "C.UTF-8"},
                **options
            )
        except (OSError, subprocess.SubprocessError) as error:
            raise HttpError(500, "file_failed", "Cannot start the file transfer: %s" % error)

    def answer(self, field):
        """Its next line's `field`, a whole number from 0 to FILE_BYTES; an error line is raised as
        the HttpError its code stands for, in the agent's words."""
        line = self.process.stdout.readline(4096)
        try:
            value = json.loads(line.decode("utf-8"))
        except ValueError:
            value = None
        error = value.get("error") if isinstance(value, dict) else None
        if isinstance(error, dict) and error.get("code") in HELPER_ERRORS:
            self.close()
            code = error["code"]
            status, message = HELPER_ERRORS[code]
            raise HttpError(status, code, (code == "disk_full" and self.disk_full()) or message(self.path))
        number = value.get(field) if isinstance(value, dict) else None
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= FILE_BYTES:
            self.close()
            raise HttpError(500, "file_failed", "The file transfer stopped unexpectedly.")
        return number

    def disk_full(self):
        """How full the home's disk is, in the agent's own reading, when an upload does not fit."""
        try:
            space = os.statvfs(self.home)
        except OSError:
            return None
        free = space.f_bavail * space.f_frsize
        if self.size <= free:
            return None
        sizes = (self.path, megabytes(self.size), megabytes(free))
        return "The VM's disk is full: %s needs %s, %s is free." % sizes

    def close(self):
        """Ends its input (an unfinished upload is then removed) and waits for it."""
        if self.process.stdin:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        self.process.stdout.close()
        self.process.wait()

    def kill(self):
        self.process.kill()
        self.close()


class Files:
    def __init__(self, config):
        self.config = config

    def upload(self, request):
        path = "/".join(parse_file_path(request.query("path")))
        size = request.stream_size
        if size > FILE_BYTES:
            sizes = (megabytes(size), megabytes(FILE_BYTES))
            raise HttpError(413, "too_large", "The file is %s; files up to %s can be uploaded." % sizes)
        if request.content_length() != framed_length(size):
            framing = (size, FILE_CHUNK_BYTES)
            raise invalid(["Content-Length does not match %d bytes in frames of %d." % framing])
        helper = FileHelper(resolve_run_as(self.config), "write", path, size)
        if helper.answer("ready") != size:  # the path is good and the disk has room
            helper.close()
            raise HttpError(500, "file_failed", "The file transfer stopped unexpectedly.")
        # Once the helper stopped (a full disk), the rest of the body is still read, and dropped, so
        # that the BFF, still sending, reads the answer instead of a reset connection.
        helper_stopped = False
        try:
            request.send_continue()
            for data in request.read_frames(size):
                if not helper_stopped:
                    try:
                        helper.process.stdin.write(data)
                    except OSError:
                        helper_stopped = True  # its answer line says why
        except HttpError:
            helper.close()  # its input ends early, so it removes what it wrote
            raise
        try:
            helper.process.stdin.close()
        except OSError:
            pass
        if helper.answer("bytes") != size:
            helper.close()
            raise HttpError(500, "file_failed", "The file transfer stopped unexpectedly.")
        helper.close()
        return {"path": path, "bytes": size}

    def download(self, request):
        path = "/".join(parse_file_path(request.query("path")))
        helper = FileHelper(resolve_run_as(self.config), "read", path)
        size = helper.answer("size")
        try:
            request.send_frames(size, helper.process.stdout)
        finally:
            helper.kill()
        return None


# ---------------------------------------------------------------------------------------------
# Terminals (/v1/terminal): the student's login shell on a PTY of its own, carried over the upgraded
# connection in signed frames both ways (docs/agent.md, "Terminals").


class TerminalClosed(Exception):
    """The connection is done with: the BFF left, or sent what no BFF sends."""


def parse_terminal_size(rows, cols):
    def size_of(text):
        # [0-9], not \d: int() would also take other scripts' digits.
        if text is None or not re.fullmatch(r"[0-9]{1,4}", text) or not 1 <= int(text) <= TTY_SIZE:
            return None
        return int(text)

    size = {"rows": size_of(rows), "cols": size_of(cols)}
    if size["rows"] is None or size["cols"] is None:
        raise invalid(['"rows" and "cols" must be whole numbers from 1 to %d.' % TTY_SIZE])
    return size


def terminal_mac(key, direction, nonce, index, kind, payload):
    """A frame's MAC covers its direction, its place on the connection, its type and its payload.
    The length field is left out: it only says where the payload ends, and the payload is covered."""
    return frame_mac(key, "lab-agent-terminal:v1\n" + direction, nonce, index, bytes((kind,)) + payload)


def login_shell(run_as):
    """The user's own shell, as a login would start it. nologin and false are no shell to type in:
    the tests run as root with "nobody", whose shell is nologin, and a check runs bash as them anyway."""
    try:
        shell = pwd.getpwuid(run_as.uid).pw_shell
    except KeyError:
        shell = ""
    if os.path.basename(shell) in ("nologin", "false") or not os.access(shell, os.X_OK):
        shell = "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"
    return shell


def keep_alive(connection):
    """TCP keepalive: a peer that vanished without a FIN is found even while nothing is sent. The
    peer is whatever dialled the guest (KubeVirt's port-forward), not the BFF itself: a BFF gone
    behind a forward that lives on is what TERMINAL_IDLE_SECONDS is for."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in TERMINAL_KEEPALIVE:
        if hasattr(socket, name):
            connection.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)


class Terminal:
    """
    A login shell in a session of its own with a new PTY as its controlling terminal, as the student
    (uid, their own primary group and their groups: this is their shell, not a check). relay() then
    carries it until the shell exits or the BFF leaves.

    WARNING: the connection is non-blocking while it carries frames, and one loop serves it and the
    PTY. A blocking sendall would stop the loop whenever the BFF does not read: no frame would be
    read, no ping answered, no idle deadline seen, and a BFF gone without a FIN would hold the
    terminal for ever; a send timeout would only shorten that blindness, and cut a BFF that merely
    reads slowly. So frames to the BFF wait in to_bff, in the order their indexes were signed,
    until the socket takes them, and the socket is read whatever else waits. Flow control stays: the
    PTY is read only once to_bff is empty, so a program that floods its terminal waits for the BFF
    (and the browser) to keep up, and its output never piles up in the agent.
    """

    def __init__(self, run_as, size, running, key, nonce):
        self.key = key
        self.nonce = nonce
        self.running = running
        self.sent = 0
        self.received = 0
        self.incoming = bytearray()  # the BFF's bytes, up to the end of its last whole frame
        self.heard = time.monotonic()  # when the BFF's last frame came
        # Input the PTY could not take yet (the program does not read it), TERMINAL_INPUT_BYTES at most.
        self.to_pty = bytearray()
        # Signed frames the socket has not taken yet; last_queued is the type of the last one.
        self.to_bff = bytearray()
        self.last_queued = None
        self.exit_queued = False  # then the exit frame is the last: no pong and no output after it
        self.connection = None
        self.selector = None
        self.watching = {}  # what the selector watches now, by file: socket and master
        self.reaped = False
        shell = login_shell(run_as)
        env = clean_environment(run_as, shell, TERM="xterm-256color")
        master, slave = os.openpty()
        try:
            set_window_size(master, size["rows"], size["cols"])
            if run_as.switch:
                # As login and sshd do: `tty`, screen and mesg expect the student's terminal to be theirs.
                os.fchown(slave, run_as.uid, -1)
            # The shell leads its session and process group: an agent that stops kills the group, as it
            # kills running checks.
            self.child = running.spawn(
                lambda: subprocess.Popen(
                    # A leading "-" in argv[0] makes it a login shell: the student's profile runs, as at
                    # the console. That is what the student expects here; checks never get one.
                    ["-" + os.path.basename(shell)],
                    executable=shell,
                    stdin=slave,
                    stdout=slave,
                    stderr=slave,
                    start_new_session=True,
                    preexec_fn=child_setup(run_as, run_as.own_gid, controlling_terminal=True),
                    close_fds=True,
                    cwd=run_as.home,
                    env=env,
                )
            )
        except (OSError, subprocess.SubprocessError) as error:
            os.close(master)
            raise HttpError(500, "spawn_failed", "Cannot start the terminal's shell %s: %s" % (shell, error))
        finally:
            # From here only the shell and what it starts hold the PTY's other end: once all of them
            # have closed it, reading the master gives EIO.
            os.close(slave)
        self.master = master
        os.set_blocking(master, False)

    def run(self, request):
        """Answers 101 and relays; ends with the exit frame once the shell is done, or without one
        once the BFF left, broke the protocol or fell silent."""
        self.connection = request.connection
        self.selector = selectors.DefaultSelector()
        try:
            self.incoming += request.upgrade(TERMINAL_PROTOCOL)
            keep_alive(self.connection)
            self.connection.setblocking(False)  # see the class's WARNING
            self.heard = time.monotonic()
            self.take_frames()
            self.relay()
            self.reap()
            code = self.child.returncode
            result = {"exitCode": code if code >= 0 else None}
            result["signal"] = signal_name(-code) if code < 0 else None
            self.queue(TERMINAL_EXIT, json.dumps(result, separators=(",", ":")).encode("utf-8"))
            self.exit_queued = True
            while self.to_bff:
                self.wait(0, None)  # the exit frame too waits for a BFF that does not read, not for ever
        except TerminalClosed:
            # At once: a BFF that left reads nothing more, and a peer that broke the protocol is not
            # the BFF. Then the shell is hung up, as when a terminal window closes.
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.close_master()
            self.reap()
        finally:
            self.selector.close()

    def relay(self):
        """Returns once the shell's side of the PTY has ended (or stayed silent for TERMINAL_DRAIN_SECONDS
        after the shell exited); raises TerminalClosed when the BFF left, broke the protocol or fell
        silent."""
        quiet_since = None  # once the shell has exited: since when the PTY said nothing
        while True:
            now = time.monotonic()
            if quiet_since is None and self.child.poll() is not None:
                quiet_since = now
            if quiet_since is not None and self.to_bff:
                quiet_since = now  # output still on its way to the BFF is not silence
            if quiet_since is None:
                timeout = SHELL_POLL_SECONDS
            else:
                timeout = quiet_since + TERMINAL_DRAIN_SECONDS - now
                if timeout <= 0:
                    return  # the shell exited; whatever still holds the PTY has nothing to say
            reading = 0 if self.to_bff else selectors.EVENT_READ  # the flow control
            ready = self.wait(reading | (selectors.EVENT_WRITE if self.to_pty else 0), timeout)
            if self.to_pty:
                self.write_pty()
            # `reading` again: epoll reports a hung-up PTY as readable even when only writing was asked.
            if ready & reading:
                try:
                    output = os.read(self.master, TERMINAL_FRAME_BYTES)
                except BlockingIOError:
                    continue
                except OSError as error:
                    if error.errno != errno.EIO:
                        raise
                    output = b""  # EIO: no process holds the PTY's other end any more
                if not output:
                    return
                self.queue(TERMINAL_OUTPUT, output)
                if quiet_since is not None:
                    quiet_since = time.monotonic()

    def wait(self, pty_events, timeout):
        """One select over the socket and the PTY's master (for `pty_events`), `timeout` seconds at
        most (None: only the idle deadline). The socket is served here: the BFF's frames are read and
        acted on as they come, before the next read of the PTY (a Ctrl-C gets through while the
        program floods), and queued frames go out as far as it takes them. Returns the master's
        events; raises TerminalClosed once the BFF has sent nothing for TERMINAL_IDLE_SECONDS."""
        connection = self.connection
        self.watch(connection, selectors.EVENT_READ | (selectors.EVENT_WRITE if self.to_bff else 0))
        if self.master is not None:
            self.watch(self.master, pty_events)
        left = self.heard + TERMINAL_IDLE_SECONDS - time.monotonic()
        if left <= 0:
            raise TerminalClosed()
        if timeout is not None:
            left = min(left, timeout)
        ready = {key.fileobj: mask for key, mask in self.selector.select(left)}
        events = ready.get(connection, 0)
        if events & selectors.EVENT_READ:
            try:
                data = connection.recv(TERMINAL_HEAD_BYTES + TERMINAL_FRAME_BYTES)
            except BlockingIOError:
                data = None
            except OSError:
                data = b""  # a reset, or keepalive gave up on the peer
            if data == b"":
                raise TerminalClosed()
            if data:
                self.incoming += data
                self.take_frames()
        if events & selectors.EVENT_WRITE:
            self.flush()
        return ready.get(self.master, 0)

    def watch(self, target, events):
        if self.watching.get(target, 0) == events:
            return
        if not events:
            self.selector.unregister(target)
            del self.watching[target]
        elif target in self.watching:
            self.selector.modify(target, events)
            self.watching[target] = events
        else:
            self.selector.register(target, events)
            self.watching[target] = events

    def take_frames(self):
        """Acts on each whole frame in `incoming` and removes it; a partial one waits for its rest."""
        incoming = self.incoming
        while len(incoming) >= TERMINAL_HEAD_BYTES:
            kind, length = TERMINAL_HEAD.unpack_from(incoming, FRAME_MAC_BYTES)
            if length > TERMINAL_FRAME_BYTES:
                raise TerminalClosed()  # before its bytes are waited for, so none are held
            end = TERMINAL_HEAD_BYTES + length
            if len(incoming) < end:
                return
            payload = bytes(incoming[TERMINAL_HEAD_BYTES:end])
            expected = terminal_mac(self.key, "in", self.nonce, self.received, kind, payload)
            if not hmac.compare_digest(expected, bytes(incoming[:FRAME_MAC_BYTES])):
                raise TerminalClosed()
            del incoming[:end]
            self.received += 1
            # A verified frame, not any byte: a frame that trickles in forever does not keep a line.
            self.heard = time.monotonic()
            if kind == TERMINAL_INPUT:
                if self.exit_queued:
                    continue  # the shell is gone; nobody reads it
                self.to_pty += payload
                if len(self.to_pty) > TERMINAL_INPUT_BYTES:
                    self.write_pty()
                    if len(self.to_pty) > TERMINAL_INPUT_BYTES:
                        raise TerminalClosed()  # typing on into a program that does not read
            elif kind == TERMINAL_RESIZE and length == 4:
                rows, cols = struct.unpack(">HH", payload)
                if not (1 <= rows <= TTY_SIZE and 1 <= cols <= TTY_SIZE):
                    raise TerminalClosed()
                try:
                    # On the master: the kernel sends SIGWINCH to the terminal's foreground process group.
                    set_window_size(self.master, rows, cols)
                except OSError:
                    pass  # the shell's side is gone already; reading the master says so next
            elif kind == TERMINAL_PING and length == 0:
                # A pong that still waits behind output answers this ping too: the BFF asks only
                # whether the line answers, and one that pings without reading piles nothing up here.
                if not self.exit_queued and not (self.to_bff and self.last_queued == TERMINAL_PONG):
                    self.queue(TERMINAL_PONG, b"")
            else:
                raise TerminalClosed()

    def write_pty(self):
        while self.to_pty:
            try:
                written = os.write(self.master, self.to_pty[:TERMINAL_FRAME_BYTES])
            except BlockingIOError:
                return  # the PTY is full: the rest waits for EVENT_WRITE
            except OSError as error:
                if error.errno != errno.EIO:
                    raise
                self.to_pty.clear()  # the shell's side is gone; reading the master says so next
                return
            del self.to_pty[:written]

    def queue(self, kind, payload):
        """Signs the next frame to the BFF, puts it behind those still waiting and sends what it can."""
        signature = terminal_mac(self.key, "out", self.nonce, self.sent, kind, payload)
        self.sent += 1
        self.to_bff += signature + TERMINAL_HEAD.pack(kind, len(payload)) + payload
        self.last_queued = kind
        self.flush()

    def flush(self):
        while self.to_bff:
            try:
                sent = self.connection.send(self.to_bff)
            except BlockingIOError:
                return  # the socket is full: the rest waits for EVENT_WRITE
            except OSError:
                raise TerminalClosed()
            del self.to_bff[:sent]

    def close_master(self):
        if self.master is not None:
            os.close(self.master)
            self.master = None

    def reap(self):
        """Waits for the shell (TERMINAL_HANGUP_SECONDS at most, then its group is killed), then kills
        whatever is left of its process group, as after a check. Jobs the shell put in groups of their
        own and that outlived a hang-up (nohup) keep running, as after an ssh session."""
        if self.reaped:
            return
        try:
            self.child.wait(TERMINAL_HANGUP_SECONDS)
        except subprocess.TimeoutExpired:
            kill_group(self.child.pid)
            self.child.wait()
        kill_group(self.child.pid)
        self.running.remove(self.child.pid)
        self.reaped = True

    def close(self):
        """Whatever way the terminal ended (an exception included): no fd and no zombie stay behind."""
        self.close_master()
        self.reap()


# ---------------------------------------------------------------------------------------------
# Activity (/v1/activity): what the BFF's idle handling asks about besides console input.

# struct utmp as glibc writes it on Linux (64-bit and 32-bit alike): type, pid, line, id, user, host,
# exit status, session, time, address, padding.
UTMP = struct.Struct("<hxxi32s4s32s256shhiii4i20x")
UTMP_FILES = ("/run/utmp", "/var/run/utmp")
USER_PROCESS = 7


def cpu_ticks(pid):
    """utime + stime + cutime + cstime of /proc/PID/stat: its CPU time and that of children it waited for."""
    with open("/proc/%d/stat" % pid, "rb") as stat:
        text = stat.read().decode("ascii", "replace")
    fields = text[text.rindex(")") + 2 :].split()
    # After the command: state is field 3, so utime (14) .. cstime (17) are fields[11:15], pgrp (5) fields[2].
    return sum(int(value) for value in fields[11:15]), int(fields[2])


def student_cpu(uid, skip_groups):
    """CPU seconds used by the student's processes (and their waited-for children), and how many there are."""
    ticks = 0
    count = 0
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        pid = int(entry)
        try:
            if os.stat("/proc/%d" % pid).st_uid != uid:
                continue
            used, group = cpu_ticks(pid)
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        # The agent's own checks run as the student too; a grading run is not the student at work.
        if skip_groups.contains(group):
            continue
        ticks += used
        count += 1
    return ticks / os.sysconf("SC_CLK_TCK"), count


# The VM's screen (the VGA console): a graphical lab's user data logs the student in there by itself,
# and what is typed there comes through the BFF's screen, which counts it, as the serial console's.
SCREEN_TTY = "tty1"


def logins(serial_tty, now):
    """Who is logged in on a terminal other than the consoles' autologins (the serial console's and the
    screen's), and how long each has been idle (the terminal's access time, as w(1) reads it)."""
    serial = os.path.basename(serial_tty)
    for path in UTMP_FILES:
        try:
            with open(path, "rb") as utmp:
                data = utmp.read(UTMP.size * 1024)
            break
        except OSError:
            continue
    else:
        return []
    found = []
    for offset in range(0, len(data) - UTMP.size + 1, UTMP.size):
        record = UTMP.unpack_from(data, offset)
        kind, pid, line, user = record[0], record[1], record[2], record[4]
        line = line.split(b"\0", 1)[0].decode("utf-8", "replace")
        if kind != USER_PROCESS or line in ("", serial, SCREEN_TTY, "console") or "/" in line.replace("pts/", ""):
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue  # a stale record: its session ended without logging out
        except PermissionError:
            pass
        try:
            idle = max(0, int(now - os.stat("/dev/" + line).st_atime))
        except OSError:
            continue
        found.append({"user": user.split(b"\0", 1)[0].decode("utf-8", "replace"), "tty": line, "idleSeconds": idle})
    return found


# ---------------------------------------------------------------------------------------------
# HTTP.


class Agent:
    def __init__(self, config, log):
        self.config = config
        self.log = log
        self.nonces = NonceMemory(REMEMBERED_NONCES)
        self.check_slots = threading.BoundedSemaphore(CONCURRENT_CHECKS)
        self.running = RunningGroups()
        self.check_groups = RunningGroups(parent=self.running)
        self.files = Files(config)
        self.terminal_slots = threading.BoundedSemaphore(TERMINALS)
        self.claiming = threading.Lock()

    def health(self, request):
        run_as = resolve_run_as(self.config)
        return {"status": "ok", "version": VERSION, "runAs": {"user": run_as.user, "home": run_as.home}}

    def checks(self, request):
        specs = parse_check_request(request.json_body())
        run_as = resolve_run_as(self.config)
        cancelled = threading.Event()
        results = [None] * len(specs)
        failures = []

        def run(index, spec):
            with self.check_slots:
                if cancelled.is_set():
                    return
                try:
                    results[index] = run_check(spec, run_as, cancelled, self.check_groups)
                except HttpError as error:
                    failures.append(error)
                    cancelled.set()

        workers = [threading.Thread(target=run, args=item, daemon=True) for item in enumerate(specs)]
        for worker in workers:
            worker.start()
        for worker in workers:
            while worker.is_alive():
                worker.join(0.1)
                if not cancelled.is_set() and request.client_gone():
                    cancelled.set()
        if failures:
            raise failures[0]
        if request.client_gone():
            return None  # Killed because the client left: nobody is there to read these results.
        return {"results": results}

    def activity(self, request):
        run_as = resolve_run_as(self.config)
        cpu_seconds, processes = student_cpu(run_as.uid, self.check_groups)
        return {
            "cpuSeconds": round(cpu_seconds, 2),
            "processes": processes,
            "logins": logins(self.config["tty"], time.time()),
        }

    def tty(self, request):
        size = parse_tty_size(request.json_body())
        set_tty_size(self.config["tty"], size)
        return size

    def terminal(self, request):
        size = parse_terminal_size(request.query("rows"), request.query("cols"))
        if request.headers.get("Upgrade", "").strip().lower() != TERMINAL_PROTOCOL:
            raise invalid(["A terminal needs Upgrade: %s." % TERMINAL_PROTOCOL])
        if not self.terminal_slots.acquire(blocking=False):
            message = "This VM has %d terminals open already, the most it allows; close one first."
            raise HttpError(503, "too_many_terminals", message % TERMINALS)
        try:
            terminal = Terminal(resolve_run_as(self.config), size, self.running, request.key, request.nonce)
            try:
                terminal.run(request)
            finally:
                terminal.close()
        finally:
            self.terminal_slots.release()
        return None  # the 101 was the answer; handle_request logs the terminal once it has ended

    def claim(self, request):
        """A warm VM becomes someone's session: its key is replaced by the session's, sealed under the old
        one. Answered (signed) with the new key, which proves the change; the old key opens nothing after."""
        body = request.json_body()
        sealed = body.get("key") if isinstance(body, dict) else None
        new_key = unseal_key(request.key, request.nonce, sealed)
        with self.claiming:
            if read_key(self.config["keyFile"]) != request.key:
                raise HttpError(409, "claimed_already", "This VM was claimed already.")
            try:
                replace_key(self.config["keyFile"], new_key)
            except OSError as error:
                raise HttpError(500, "key_not_written", "The new key could not be written: %s." % error.strerror)
        request.key = new_key
        return {"claimed": True}

    def routes(self):
        return {
            "/v1/health": {"GET": self.health},
            "/v1/activity": {"GET": self.activity},
            "/v1/claim": {"POST": self.claim},
            "/v1/checks": {"POST": self.checks},
            "/v1/tty": {"POST": self.tty},
            "/v1/files": {"PUT": self.files.upload, "GET": self.files.download},
            "/v1/terminal": {"GET": self.terminal},
        }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "lab-agent/" + VERSION
    sys_version = ""
    agent = None  # set by main()

    def setup(self):
        super().setup()
        # One deadline for the whole request, however slowly it trickles in: then reading stops.
        self.read_too_slow = False
        self.read_deadline = threading.Timer(REQUEST_READ_SECONDS, self.stop_reading)
        self.read_deadline.daemon = True
        self.read_deadline.start()
        self.rfile = HeadLimit(self.rfile, HEAD_BYTES)

    def stop_reading(self):
        self.read_too_slow = True
        try:
            self.connection.shutdown(socket.SHUT_RD)
        except OSError:
            pass

    def finish(self):
        self.read_deadline.cancel()
        super().finish()

    def do_GET(self):
        self.handle_request()

    def do_POST(self):
        self.handle_request()

    def do_PUT(self):
        self.handle_request()

    def do_DELETE(self):
        self.handle_request()

    def handle_request(self):
        started = time.monotonic()
        self.close_connection = True
        self.nonce = None
        self.key = None
        # Once a 101 went out the connection carries frames: an HTTP answer there would be garbage.
        self.upgraded = False
        try:
            self.authenticate()
            answer = self.route()
            if answer is not None:
                self.send_json(200, answer)
        except HttpError as error:
            if not self.upgraded:
                self.send_error_body(error)
        except Exception:
            self.agent.log("lab-agent: %s %s failed: %s" % (self.command, self.path, traceback.format_exc()))
            if not self.upgraded:
                self.send_error_body(HttpError(500, "internal", "The agent failed; its log has the details."))
        self.agent.log(
            "%s %s %s %dms"
            % (self.command, self.path, getattr(self, "status", "-"), (time.monotonic() - started) * 1000)
        )

    def authenticate(self):
        match = AUTHORIZATION.match(self.headers.get("Authorization", ""))
        if not match:
            raise HttpError(401, "unauthenticated", "This agent answers signed requests only.", False)
        # An upload's body is read after this, frame by frame, each frame signed on its own.
        streamed = self.command == "PUT" and self.path.split("?", 1)[0] == "/v1/files"
        if streamed:
            self.body = b""
            self.stream_size = self.read_stream_size()
        else:
            self.body = self.read_body()
        key = read_key(self.agent.config["keyFile"])
        nonce, presented = match.group(1), match.group(2)
        if streamed:
            expected = stream_request_mac(key, self.command, self.path, nonce, self.stream_size)
        else:
            expected = request_mac(key, self.command, self.path, nonce, self.body)
        if not hmac.compare_digest(expected, presented):
            raise HttpError(401, "unauthenticated", "The request is not signed with this VM's key.", False)
        if not self.agent.nonces.first_use(nonce):
            raise HttpError(401, "unauthenticated", "This request was seen before.", False)
        self.key, self.nonce = key, nonce

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise HttpError(411, "invalid", "Send the body with a Content-Length.", False)
        length = self.headers.get("Content-Length", "0")
        if not re.fullmatch(r"\d{1,12}", length):
            raise HttpError(400, "invalid", "Content-Length is not a number.", False)
        if int(length) > BODY_BYTES:
            raise HttpError(413, "too_large", "The body is over %d bytes." % BODY_BYTES, False)
        body = self.rfile.read(int(length))
        if len(body) < int(length):
            if self.read_too_slow:
                message = "The request did not arrive within %d s." % REQUEST_READ_SECONDS
                raise HttpError(408, "invalid", message, False)
            raise HttpError(400, "invalid", "The body ended early.", False)
        self.read_deadline.cancel()
        return body

    def read_stream_size(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise HttpError(411, "invalid", "Send the body with a Content-Length.", False)
        size = self.headers.get("Lab-Agent-File-Size", "")
        length = self.headers.get("Content-Length", "")
        if not re.fullmatch(r"\d{1,12}", size) or not re.fullmatch(r"\d{1,12}", length):
            raise HttpError(400, "invalid", "An upload needs Lab-Agent-File-Size and Content-Length.", False)
        return int(size)

    def handle_expect_100(self):
        # Not yet: an upload says 100 Continue only once its path and the disk are known to be good,
        # so a refused file is never sent (Files.upload).
        return True

    def content_length(self):
        return int(self.headers.get("Content-Length", "0"))

    def query(self, name):
        values = parse_qs(urlsplit(self.path).query).get(name)
        return values[0] if values else None

    def stream_for(self, seconds):
        """A file takes as long as it needs, as long as it never stalls for `seconds`."""
        self.read_deadline.cancel()
        self.connection.settimeout(seconds)

    def send_continue(self):
        self.stream_for(FILE_IDLE_SECONDS)
        self.send_response_only(100)
        self.end_headers()

    def upgrade(self, protocol):
        """
        Answers 101: from here the connection carries `protocol` for as long as it lasts, without the
        request's deadline or timeout (a terminal may sit idle for hours; its own idle limit counts the
        BFF's frames, pings included). Returns the bytes the head's reader already took from the socket
        past the head: frames the BFF sent without waiting for the 101.
        """
        self.read_deadline.cancel()
        self.connection.settimeout(None)
        self.upgraded = True
        self.status = 101
        self.send_response_only(101)
        self.send_header("Upgrade", protocol)
        self.send_header("Connection", "Upgrade")
        self.send_header("Lab-Agent-MAC", answer_mac(self.key, self.nonce, 101, b""))
        try:
            self.end_headers()
        except OSError:
            raise TerminalClosed()
        # Non-blocking for one read: the buffer's bytes if it has any, b"" rather than a wait if not.
        self.connection.setblocking(False)
        try:
            return self.rfile.read1(TERMINAL_HEAD_BYTES + TERMINAL_FRAME_BYTES) or b""
        except OSError:
            return b""
        finally:
            self.connection.setblocking(True)

    def read_frames(self, size):
        """The upload's bytes, frame by frame, each checked against its MAC before it is used."""
        index = 0
        left = size
        while left > 0:
            length = min(left, FILE_CHUNK_BYTES)
            try:
                frame = self.rfile.read(FRAME_MAC_BYTES + length)
            except OSError:
                frame = b""
            if len(frame) < FRAME_MAC_BYTES + length:
                raise HttpError(408, "invalid", "The upload stopped arriving.")
            data = frame[FRAME_MAC_BYTES:]
            expected = frame_mac(self.key, "lab-agent-frame:v1", self.nonce, index, data)
            if not hmac.compare_digest(expected, frame[:FRAME_MAC_BYTES]):
                message = "Frame %d of the upload is not signed with this VM's key." % index
                raise HttpError(400, "invalid", message)
            yield data
            index += 1
            left -= length

    def send_frames(self, size, source):
        """A 200 whose body is `size` bytes from `source` in signed frames; a short source cuts it."""
        self.stream_for(FILE_IDLE_SECONDS)
        self.status = 200
        self.send_response_only(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(framed_length(size)))
        self.send_header("Lab-Agent-File-Size", str(size))
        self.send_header("Connection", "close")
        self.send_header("Lab-Agent-MAC", stream_answer_mac(self.key, self.nonce, 200, size))
        self.end_headers()
        index = 0
        left = size
        while left > 0:
            data = source.read(min(left, FILE_CHUNK_BYTES))
            if not data:
                return  # closing early: the BFF finds frames missing and drops the download
            try:
                signature = frame_mac(self.key, "lab-agent-answer-frame:v1", self.nonce, index, data)
                self.wfile.write(signature + data)
            except OSError:
                return  # the BFF left
            index += 1
            left -= len(data)

    def route(self):
        methods = self.agent.routes().get(self.path.split("?", 1)[0])
        if methods is None:
            raise HttpError(404, "not_found", "There is no %s here." % self.path)
        handler = methods.get(self.command)
        if handler is None:
            allowed = ", ".join(methods)
            raise HttpError(405, "method_not_allowed", "%s answers %s only." % (self.path, allowed))
        return handler(self)

    def json_body(self):
        try:
            return json.loads(self.body.decode("utf-8"))
        except ValueError:
            raise invalid(["The request body is not valid JSON."])

    def client_gone(self):
        """True once the client closed its side; it sends nothing after its request."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def send_error_body(self, error):
        body = {"error": {"code": error.code, "message": error.message}}
        self.send_json(error.status, body, signed=error.signed)

    def send_json(self, status, value, signed=True):
        body = json.dumps(value, ensure_ascii=False).encode("utf-8")
        self.status = status
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        if status == 401:
            self.send_header("WWW-Authenticate", "Lab-Agent-HMAC")
        if signed and self.key is not None:
            self.send_header("Lab-Agent-MAC", answer_mac(self.key, self.nonce, status, body))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass  # The client left; there is nobody to tell.

    def log_message(self, format, *args):
        pass  # One line per request is written by handle_request; nothing of its content.


class HeadLimit:
    """The request line and headers may take HEAD_BYTES in all; past that they read as ended."""

    def __init__(self, raw, limit):
        self.raw = raw
        self.left = limit

    def readline(self, size=-1):
        if self.left <= 0:
            return b""
        line = self.raw.readline(self.left if size < 0 else min(size, self.left))
        self.left -= len(line)
        return line

    def __getattr__(self, name):
        return getattr(self.raw, name)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, handler):
        self.connection_slots = threading.BoundedSemaphore(CONNECTIONS)
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        # A flood of idle connections must not starve the BFF's: the excess is closed at once.
        if not self.connection_slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self.connection_slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connection_slots.release()

    def handle_error(self, request, client_address):
        pass  # A client that broke its connection is not the agent's failure.


def notify_ready():
    """systemd's Type=notify: the unit counts as started, and the getty may go, once we listen."""
    address = os.environ.pop("NOTIFY_SOCKET", None)
    if not address:
        return
    if address.startswith("@"):
        address = "\0" + address[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as notify:
        notify.sendto(b"READY=1", address)


def log_line(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv):
    if argv[:1] == ["--file-helper"]:
        return file_helper(argv[1:])
    if "--help" in argv:
        print(USAGE)
        return 0
    try:
        config = load_config(argv, os.environ)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    mismatch = run_as_mismatch(config)
    if mismatch:
        print(mismatch, file=sys.stderr)
    agent = Agent(config, log_line)
    Handler.agent = agent
    try:
        server = Server((config["host"], config["port"]), Handler)
    except OSError as error:
        print("lab-agent: cannot listen on %s:%s: %s" % (config["host"], config["port"], error.strerror),
              file=sys.stderr)
        return 1

    def stop(signum, frame):
        agent.running.kill_all()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # Tests and the emulator read the port from this line: keep its shape.
    log_line("lab-agent %s listening on %s:%d" % (VERSION, config["host"], server.server_address[1]))
    notify_ready()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
