"""Terminals (/v1/terminal): the student's login shell on a PTY of its own, carried over the upgraded
connection in signed frames both ways (docs/agent.md, "Terminals").

Trusts: the frames whose MAC matches (keys.py); a frame that fails ends the terminal. The shell and
everything it runs are the student's: the shell runs as the student, and what it prints is only
framed and passed on.
"""

import errno
import hmac
import json
import os
import pwd
import re
import selectors
import socket
import struct
import subprocess
import time

from checks import child_setup, clean_environment, kill_group, set_window_size, signal_name
from config import (
    FRAME_MAC_BYTES,
    TERMINAL_FRAME_BYTES,
    TERMINAL_HEAD,
    TERMINAL_HEAD_BYTES,
    TERMINAL_PROTOCOL,
    TTY_SIZE,
)
from http_error import HttpError, invalid
from keys import frame_mac


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
