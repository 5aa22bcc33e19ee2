"""Checks (/v1/checks): a lab's commands run as the student, in the student's home, and scored.

Trusts: the commands, which arrive in requests keys.py verified. Does not trust anything a check
touches or prints: a check runs as the student in a clean environment (no rc files, no variables of
the student's), with nobody's group so the student's own programs cannot ptrace it or write into its
pipes; its output is only read, limited and parsed for a score line, never acted on.
"""

import fcntl
import os
import re
import selectors
import signal
import struct
import subprocess
import termios
import threading
import time

from config import (
    CHECKS_PER_REQUEST,
    CHECK_ID_LENGTH,
    CHECK_PATH,
    COMMAND_LENGTH,
    OUTPUT_BYTES,
    TIMEOUT_SECONDS,
    TTY_SIZE,
)
from http_error import HttpError, invalid


# Enough of stdout's end to hold its last line, where a score line is read.
STDOUT_TAIL_BYTES = 4096
# After a check's command exits, how long its pipes may stay open: a process that left the check's
# process group (setsid, a daemon) could hold them for ever.
DRAIN_SECONDS = 1.0
SCORE_LINE = re.compile(r"^score=([0-9]+(?:\.[0-9]+)?|\.[0-9]+)$")


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
