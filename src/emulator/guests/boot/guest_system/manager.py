# The service manager (systemd, PID 1 on a real guest): its event loop, timers, the console and
# cloud-init's output, the journal, the boot's console status, and its clients' requests (systemctl,
# journalctl, the boot's own). Starting and stopping units, rebooting and journalctl are its parts in
# unit_lifecycle.py, reboot.py and journal_query.py.
import ctypes
import heapq
import json
import os
import selectors
import signal
import socket
import struct
import time

from constants import CLOUD_INIT_OUTPUT, CONSOLES_MARKER, CONTROL_SOCKET, JOURNAL, NOTIFY_SOCKET
from journal_query import JournalQuery
from reboot import Reboot
from reply import Reply
from systemctl import Systemctl
from unit_lifecycle import UnitLifecycle


class Manager(UnitLifecycle, Reboot, JournalQuery):
    def __init__(self, plan, boot_output, ready_fd, status_fd):
        self.plan = plan
        self.status_fd = status_fd
        self.hostname = plan["hostname"]
        self.booting = True
        self.units = {}
        self.timers = []
        self.timer_serial = 0
        self.selector = selectors.DefaultSelector()
        self.by_pid = {}
        self.boot_output = boot_output
        self.ready_fd = ready_fd
        # The serial line is a socket the console's shell shares: O_NONBLOCK on it would reach the
        # shell too, so each send is non-blocking by itself (MSG_DONTWAIT) and a full line waits here.
        try:
            self.console = socket.socket(fileno=os.dup(1))
        except OSError:
            self.console = None
        self.console_pending = b""
        self.output_log = None
        self.live_timers = set()
        self.rebooting = False
        # Before the console's shell runs, the emulator turns the boot's line feeds into CR LF as a
        # tty does (serial-output.ts); afterwards the bytes pass as they are, so a reboot's own lines
        # bring their CRs.
        self.line_end = "\n"

    # -- plumbing --------------------------------------------------------------------------------

    def serve(self):
        # PID 1 does not die of these. A handler, not SIG_IGN: an ignored signal stays ignored across
        # exec, and the units must die of SIGTERM. SIGINT is Control+Alt+Delete (on_wake).
        for signum in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: None)
        # Named as PID 1 is on a real guest; the emulator finds it by this name to hand it the
        # console's Control+Alt+Delete as the kernel does (guest.ts).
        ctypes.CDLL(None).prctl(15, b"systemd", 0, 0, 0)  # PR_SET_NAME
        # Orphans of the units are reparented here and reaped, as PID 1 does.
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        os.set_blocking(wake_r, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        os.makedirs("/run/systemd", 0o755, exist_ok=True)
        os.makedirs(os.path.dirname(JOURNAL), 0o755, exist_ok=True)
        fd = os.open(JOURNAL, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        self.journal_file = os.fdopen(fd, "a", buffering=1, encoding="utf-8")
        self.output_log = os.open(CLOUD_INIT_OUTPUT, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o640)
        self.control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.control.bind(CONTROL_SOCKET)
        os.chmod(CONTROL_SOCKET, 0o666)
        self.control.listen(64)
        self.control.setblocking(False)
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        self.notify.bind(NOTIFY_SOCKET)
        os.chmod(NOTIFY_SOCKET, 0o777)
        self.notify.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.notify.setblocking(False)
        self.selector.register(self.control, selectors.EVENT_READ, self.on_accept)
        self.selector.register(self.notify, selectors.EVENT_READ, self.on_notify)
        self.selector.register(wake_r, selectors.EVENT_READ, lambda _: self.on_wake(wake_r))
        os.set_blocking(self.boot_output, False)
        self.selector.register(self.boot_output, selectors.EVENT_READ, lambda _: self.on_boot_output())
        os.write(self.ready_fd, b"1")
        os.close(self.ready_fd)
        while True:
            timeout = None
            if self.timers:
                timeout = max(0.0, self.timers[0][0] - time.monotonic())
            for key, _ in self.selector.select(timeout):
                key.data(key.fileobj)
            now = time.monotonic()
            while self.timers and self.timers[0][0] <= now:
                _, serial, callback = heapq.heappop(self.timers)
                if callback is not None and serial in self.live_timers:
                    self.live_timers.discard(serial)
                    callback()

    def after(self, seconds, callback):
        self.timer_serial += 1
        serial = self.timer_serial
        if seconds != float("inf"):
            heapq.heappush(self.timers, (time.monotonic() + seconds, serial, callback))
            self.live_timers.add(serial)
        return serial

    def cancel(self, serial):
        if serial is not None:
            self.live_timers.discard(serial)

    def write_console(self, data):
        self.console_pending += data
        if len(self.console_pending) > 1 << 20:
            self.console_pending = self.console_pending[-(1 << 20):]
        self.flush_console()

    def flush_console(self):
        try:
            while self.console_pending:
                if self.console is None:
                    written = os.write(1, self.console_pending)
                else:
                    written = self.console.send(self.console_pending, socket.MSG_DONTWAIT)
                self.console_pending = self.console_pending[written:]
        except BlockingIOError:
            pass
        except OSError:
            self.console_pending = b""
        if self.console is None:
            return
        registered = self.console.fileno() in self.selector.get_map()
        if self.console_pending and not registered:
            self.selector.register(self.console, selectors.EVENT_WRITE, lambda _: self.flush_console())
        elif not self.console_pending and registered:
            self.selector.unregister(self.console)

    def on_boot_output(self):
        while True:
            try:
                data = os.read(self.boot_output, 65536)
            except BlockingIOError:
                return
            if not data:
                self.selector.unregister(self.boot_output)
                os.close(self.boot_output)
                self.boot_output = None
                return
            self.write_console(data)
            try:
                os.write(self.output_log, data)
            except OSError:
                pass

    def power_off(self):
        """What a real guest's systemd and kernel print as it powers off; then the host ends the VM, as
        QEMU exits when the guest powers its machine off."""
        self.journal("Reached target System Power Off.")
        self.write_console(b"[  OK  ] Reached target System Power Off.\r\nreboot: Power down\r\n")
        if self.status_fd is None:
            return False
        try:
            os.write(self.status_fd, b"poweroff\n")
        except OSError:
            return False
        return True

    def tell_host(self, word):
        """A line on the emulator's status pipe; False where the manager has none."""
        if self.status_fd is None:
            return False
        try:
            os.write(self.status_fd, word.encode() + b"\n")
        except OSError:
            return False
        return True


    def journal(self, message, unit=None, ident="systemd", pid=1):
        entry = {"t": time.time(), "ident": ident, "pid": pid, "msg": message}
        if unit is not None:
            entry["unit"] = unit
        self.journal_file.write(json.dumps(entry) + "\n")

    def status(self, ok, message):
        # systemd prints job results on the console while the system boots (ShowStatus=auto).
        if self.booting:
            mark = "[  OK  ]" if ok else "[FAILED]"
            self.write_console(("%s %s%s" % (mark, message, self.line_end)).encode())

    def on_wake(self, wake_r):
        # The wakeup fd gets each caught signal's number as a byte.
        caught = b""
        try:
            while True:
                data = os.read(wake_r, 512)
                if not data:
                    break
                caught += data
        except BlockingIOError:
            pass
        if signal.SIGINT in caught:
            self.ctrl_alt_del()
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            unit = self.by_pid.pop(pid, None)
            if unit is not None:
                self.on_main_exit(unit, status)

    # -- clients ---------------------------------------------------------------------------------

    def on_accept(self, _):
        try:
            conn, _ = self.control.accept()
        except BlockingIOError:
            return
        conn.setblocking(False)
        buffer = []
        self.selector.register(conn, selectors.EVENT_READ, lambda c: self.on_client(c, buffer))

    def on_client(self, conn, buffer):
        try:
            data = conn.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            buffer.append(data)
            if sum(len(chunk) for chunk in buffer) < 1 << 20:
                return
        self.selector.unregister(conn)
        conn.setblocking(True)
        try:
            words = [word.decode("utf-8", "surrogateescape") for word in b"".join(buffer).split(b"\0")]
            _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        except OSError:
            conn.close()
            return
        reply = Reply(conn)
        privileged = uid == 0 or uid == os.getuid()
        try:
            self.handle(words[0], words[1:], privileged, reply)
        except Exception as error:  # a bug here must not take the guest's systemd down
            reply.err("Failed: %s\n" % error).done(1)

    def handle(self, tool, args, privileged, reply):
        if tool == "boot-finished":
            if self.boot_output is not None:
                self.on_boot_output()
            self.booting = False
            self.line_end = "\r\n"
            open(CONSOLES_MARKER, "w").close()
            reply.done(0)
        elif tool == "systemctl":
            Systemctl(self, args, privileged, reply).run()
        elif tool == "journalctl":
            self.journalctl(args, privileged, reply)
        else:
            reply.err("unknown request\n").done(1)
