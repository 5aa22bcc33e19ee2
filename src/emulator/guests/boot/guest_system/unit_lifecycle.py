# The service manager's units: loading, starting (Type=simple|exec|notify|oneshot), sd_notify,
# their output into the journal, TimeoutStartSec=, Restart= with RestartSec= and the start rate
# limit, and stopping. A part of Manager (manager.py).
import errno
import os
import pwd
import selectors
import shlex
import signal
import socket
import struct
import subprocess
import time

from constants import NOTIFY_SOCKET, SERVICE_PATH, UNIT_DIR
from unit_files import CLEAN_SIGNALS, Unit, UnitConfig, status_text


class UnitLifecycle:
    # -- units -----------------------------------------------------------------------------------

    def unit(self, name):
        unit = self.units.get(name)
        if unit is None:
            unit = self.units[name] = Unit(name)
        return unit

    def load(self, unit):
        path = os.path.join(UNIT_DIR, unit.name)
        if not os.path.isfile(path):
            return None
        unit.config = UnitConfig(unit.name, path)
        return unit.config

    def set_state(self, unit, state, sub):
        if (state, sub) != (unit.state, unit.sub):
            unit.since = time.time()
        unit.state, unit.sub = state, sub

    def start(self, unit, on_done=None, automatic=False):
        """Starts a unit; on_done(ok) once the start job is over."""
        if on_done is not None:
            unit.start_waiters.append(on_done)
        if unit.state == "active":
            return self.finish_start(unit, True)
        if unit.state == "activating" and unit.sub == "start":
            return
        if unit.state == "deactivating":
            unit.stop_waiters.append(lambda ok: self.start(unit))
            return
        self.cancel(unit.timer)
        unit.timer = None
        config = self.load(unit)
        if config is None:
            return self.finish_start(unit, False)
        now = time.monotonic()
        unit.starts = [t for t in unit.starts if now - t < config.start_limit_interval]
        if len(unit.starts) >= config.start_limit_burst:
            self.set_state(unit, "failed", "failed")
            unit.result = "start-limit-hit"
            self.journal("%s: Start request repeated too quickly." % unit.name, unit.name)
            self.journal("%s: Failed with result 'start-limit-hit'." % unit.name, unit.name)
            self.journal("Failed to start %s." % config.label, unit.name)
            self.status(False, "Failed to start %s." % config.label)
            return self.finish_start(unit, False)
        unit.starts.append(now)
        if automatic:
            unit.n_restarts += 1
            self.journal("%s: Scheduled restart job, restart counter is at %d." % (unit.name, unit.n_restarts), unit.name)
        unit.stopping = False
        unit.ready = False
        unit.result = "success"
        self.journal("Starting %s..." % config.label, unit.name)
        self.set_state(unit, "activating", "start")
        if config.type == "oneshot":
            unit.oneshot_queue = list(config.exec_start)
        if not config.exec_start:
            self.journal("%s: Service has no ExecStart=, ExecStop=, or SuccessAction=. Refusing." % unit.name, unit.name)
            self.set_state(unit, "failed", "failed")
            unit.result = "resources"
            return self.finish_start(unit, False)
        spawned = self.spawn(unit, unit.oneshot_queue.pop(0) if config.type == "oneshot" else config.exec_start[0])
        # Type=simple is started once forked, even if the exec then fails; Type=exec once exec'd.
        if config.type in ("simple", "idle", "dbus", "forking") or (config.type == "exec" and spawned):
            self.became_active(unit)
        elif config.type in ("notify", "notify-reload"):
            unit.timer = self.after(config.timeout_start, lambda: self.start_timed_out(unit))

    def spawn(self, unit, command):
        config = unit.config
        line = command.lstrip("@-:+!")
        try:
            argv = [self.expand(arg, unit) for arg in shlex.split(line)]
        except ValueError:
            argv = []
        unit.exec_argv = argv
        env = {"PATH": SERVICE_PATH, "LANG": "C.UTF-8", "INVOCATION_ID": os.urandom(16).hex()}
        env.update(config.environment)
        if config.type in ("notify", "notify-reload"):
            env["NOTIFY_SOCKET"] = NOTIFY_SOCKET
        kwargs = {}
        failure = None
        if config.user and config.user not in ("root", "0"):
            try:
                entry = pwd.getpwnam(config.user) if not config.user.isdigit() else pwd.getpwuid(int(config.user))
                # With one uid (no root) there is nobody else to become.
                if entry.pw_uid != os.getuid():
                    kwargs.update(user=entry.pw_uid, group=entry.pw_gid, extra_groups=[])
                env.update(HOME=entry.pw_dir, USER=entry.pw_name, LOGNAME=entry.pw_name, SHELL=entry.pw_shell)
            except KeyError:
                failure = (217, "Failed to determine user credentials: No such process", "USER")
        executable = argv[0] if argv else ""
        if failure is None and not executable:
            failure = (203, "Failed to locate executable : No such file or directory", "EXEC")
        if failure is None and "/" not in executable:
            found = [d + "/" + executable for d in SERVICE_PATH.split(":") if os.access(d + "/" + executable, os.X_OK)]
            if found:
                executable = found[0]
        if failure is None and not os.access(executable, os.X_OK):
            reason = os.strerror(errno.ENOENT if not os.path.exists(executable) else errno.EACCES)
            self.journal("%s: Failed to locate executable %s: %s" % (unit.name, argv[0], reason), unit.name)
            failure = (203, "Failed at step EXEC spawning %s: %s" % (argv[0], reason), "EXEC")
        read_fd, write_fd = os.pipe()
        proc = None
        if failure is None:
            try:
                proc = subprocess.Popen(
                    argv, executable=executable, stdin=subprocess.DEVNULL, stdout=write_fd, stderr=write_fd,
                    cwd=config.working_directory or "/", env=env, start_new_session=True, close_fds=True, **kwargs
                )
            except OSError as error:
                failure = (203, "Failed at step EXEC spawning %s: %s" % (argv[0], error.strerror), "EXEC")
        if proc is None:
            # As systemd's forked child does when it cannot exec: it logs why and exits with 203.
            self.journal("%s: %s" % (unit.name, failure[1]), unit.name)
            pid = os.fork()
            if pid == 0:
                os._exit(failure[0])
        else:
            pid = proc.pid
        os.close(write_fd)
        unit.proc = proc
        unit.main_pid = pid
        unit.exec_pid = pid
        self.by_pid[pid] = unit
        ident = config.syslog_identifier or os.path.basename(argv[0] if argv else unit.name)
        os.set_blocking(read_fd, False)
        unit.output_fd = read_fd
        unit.output_pending = b""
        self.selector.register(read_fd, selectors.EVENT_READ, lambda _: self.on_output(unit, read_fd, ident, pid))
        return failure is None

    def expand(self, arg, unit):
        name = unit.name
        prefix = name[: -len(".service")]
        instance = prefix.partition("@")[2]
        for spec, value in (("%n", name), ("%N", prefix), ("%p", prefix.partition("@")[0]), ("%i", instance),
                            ("%h", "/root"), ("%u", "root"), ("%%", "%")):
            arg = arg.replace(spec, value)
        for key, value in unit.config.environment.items():
            arg = arg.replace("${%s}" % key, value)
            if arg == "$" + key:
                arg = value
        return arg

    def on_output(self, unit, fd, ident, pid):
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            lines = (unit.output_pending + data).split(b"\n") if unit.output_fd == fd else data.split(b"\n")
            pending = lines.pop()
            if unit.output_fd == fd:
                unit.output_pending = pending
            for line in lines:
                self.journal(line.decode("utf-8", "replace"), unit.name, ident, pid)
            return
        self.selector.unregister(fd)
        os.close(fd)
        if unit.output_fd == fd:
            if unit.output_pending:
                self.journal(unit.output_pending.decode("utf-8", "replace"), unit.name, ident, pid)
            unit.output_fd = None
            unit.output_pending = b""

    def on_notify(self, _):
        while True:
            try:
                data, ancillary, _, _ = self.notify.recvmsg(4096, socket.CMSG_SPACE(12))
            except BlockingIOError:
                return
            sender = None
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(payload) >= 12:
                    sender = struct.unpack("3i", payload[:12])[0]
            fields = dict(
                line.partition("=")[::2] for line in data.decode("utf-8", "replace").split("\n") if "=" in line
            )
            unit = self.by_pid.get(sender) if sender is not None else None
            if unit is None or unit.main_pid != sender:
                # NotifyAccess=main, the default of Type=notify: only the main process is heard.
                for candidate in self.units.values():
                    if candidate.state == "activating" and candidate.sub == "start" and candidate.main_pid:
                        self.journal(
                            "%s: Got notification message from PID %s, but reception only permitted for main PID %d"
                            % (candidate.name, sender, candidate.main_pid), candidate.name)
                continue
            if fields.get("READY") == "1" and unit.state == "activating" and unit.sub == "start":
                unit.ready = True
                self.cancel(unit.timer)
                unit.timer = None
                self.became_active(unit)

    def became_active(self, unit):
        self.set_state(unit, "active", "running")
        self.journal("Started %s." % unit.config.label, unit.name)
        self.status(True, "Started %s." % unit.config.label)
        self.finish_start(unit, True)

    def finish_start(self, unit, ok):
        waiters, unit.start_waiters = unit.start_waiters, []
        for waiter in waiters:
            waiter(ok)

    def finish_stop(self, unit, ok):
        waiters, unit.stop_waiters = unit.stop_waiters, []
        for waiter in waiters:
            waiter(ok)

    def start_timed_out(self, unit):
        unit.timer = None
        if unit.state != "activating" or unit.sub != "start":
            return
        self.journal("%s: start operation timed out. Terminating." % unit.name, unit.name)
        unit.result = "timeout"
        self.kill_unit(unit, signal.SIGTERM)
        unit.timer = self.after(unit.config.timeout_stop, lambda: self.kill_unit(unit, signal.SIGKILL))

    def kill_unit(self, unit, signum, whom="all"):
        if not unit.main_pid:
            return False
        try:
            if whom == "main":
                os.kill(unit.main_pid, signum)
            else:
                os.killpg(unit.main_pid, signum)
        except ProcessLookupError:
            try:
                os.kill(unit.main_pid, signum)
            except ProcessLookupError:
                return False
        return True

    def on_main_exit(self, unit, status):
        if unit.proc is not None:
            unit.proc.returncode = status  # reaped here, not by subprocess
        config = unit.config
        if os.WIFEXITED(status):
            code, value = "exited", os.WEXITSTATUS(status)
            clean = value == 0
        else:
            value = os.WTERMSIG(status)
            code = "dumped" if os.WCOREDUMP(status) else "killed"
            clean = value in CLEAN_SIGNALS
        unit.exec_code, unit.exec_status = code, value
        unit.main_pid = 0
        unit.proc = None
        self.cancel(unit.timer)
        unit.timer = None
        starting = unit.state == "activating" and unit.sub == "start"
        if config.type == "oneshot" and starting and clean and code == "exited":
            if unit.oneshot_queue:
                return self.spawn(unit, unit.oneshot_queue.pop(0))
            if config.remain_after_exit:
                self.set_state(unit, "active", "exited")
            else:
                self.set_state(unit, "inactive", "dead")
            self.journal("Finished %s." % config.label, unit.name)
            self.status(True, "Finished %s." % config.label)
            return self.finish_start(unit, True)
        if not (clean and code == "exited" and value == 0 and not unit.stopping):
            self.journal("%s: Main process exited, code=%s, status=%s" % (unit.name, code, status_text(code, value)), unit.name)
        if unit.result == "success":
            if unit.stopping and (clean or value == signal.SIGKILL):
                unit.result = "success"
            elif not clean:
                unit.result = "exit-code" if code == "exited" else ("core-dump" if code == "dumped" else "signal")
            elif starting and config.type in ("notify", "notify-reload"):
                unit.result = "protocol"
        if unit.stopping:
            self.set_state(unit, "inactive" if unit.result == "success" else "failed", "dead" if unit.result == "success" else "failed")
            if unit.result != "success":
                self.journal("%s: Failed with result '%s'." % (unit.name, unit.result), unit.name)
            self.journal("Stopped %s." % config.label, unit.name)
            self.finish_stop(unit, True)
            return
        if unit.result == "success":
            self.journal("%s: Deactivated successfully." % unit.name, unit.name)
        else:
            self.journal("%s: Failed with result '%s'." % (unit.name, unit.result), unit.name)
        if starting:
            self.journal("Failed to start %s." % config.label, unit.name)
            self.status(False, "Failed to start %s." % config.label)
        if self.shall_restart(unit, config):
            self.set_state(unit, "activating", "auto-restart")
            unit.timer = self.after(config.restart_sec, lambda: self.restart_now(unit))
        elif unit.result == "success":
            self.set_state(unit, "inactive", "dead")
        else:
            self.set_state(unit, "failed", "failed")
        if starting:
            self.finish_start(unit, False)

    def restart_now(self, unit):
        unit.timer = None
        if unit.state == "activating" and unit.sub == "auto-restart":
            self.start(unit, automatic=True)

    @staticmethod
    def shall_restart(unit, config):
        result = unit.result
        policy = config.restart
        if policy == "always":
            return True
        if policy == "on-success":
            return result == "success"
        if policy == "on-failure":
            return result != "success"
        if policy == "on-abnormal":
            return result in ("signal", "core-dump", "timeout", "watchdog")
        if policy == "on-abort":
            return result in ("signal", "core-dump")
        if policy == "on-watchdog":
            return result == "watchdog"
        return False

    def stop(self, unit, on_done):
        self.cancel(unit.timer)
        unit.timer = None
        if unit.state == "activating" and unit.sub == "auto-restart":
            self.set_state(unit, "inactive" if unit.result == "success" else "failed", "dead")
            return on_done(True)
        if not unit.main_pid:
            if unit.state == "active":
                self.set_state(unit, "inactive", "dead")
            return on_done(True)
        unit.stop_waiters.append(on_done)
        if unit.state == "deactivating":
            return
        unit.stopping = True
        if unit.state == "activating":
            self.finish_start(unit, False)
        self.journal("Stopping %s..." % unit.config.label, unit.name)
        self.set_state(unit, "deactivating", "stop-sigterm")
        self.kill_unit(unit, signal.SIGTERM)

        def kill():
            if unit.main_pid:
                self.journal("%s: State 'stop-sigterm' timed out. Killing." % unit.name, unit.name)
                self.kill_unit(unit, signal.SIGKILL)
        unit.timer = self.after(unit.config.timeout_stop, kill)
