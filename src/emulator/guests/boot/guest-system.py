# The inside of an emulated guest's system, run as guest root by the host's python3 (mounted read-only
# at /run/lab-guest/bin/python3, so it works on images that ship no python3; standard library only,
# Python 3.9+). `boot PLAN` starts the service manager, then runs cloud-init's stages (bootcmd,
# write_files, packages, write_files with defer, runcmd) in the order of cloud-init's cloud.cfg, and
# returns when cloud-init has finished, as cloud-final.service does on a real guest. The manager lives
# on for the guest's life.
#
# The service manager stands in for systemd (PID 1 on a real guest) for what the boot contract needs:
# units in /etc/systemd/system, Type=simple|exec|notify|oneshot, Restart=, RestartSec=, TimeoutStartSec=,
# the start rate limit, a journal, and the console messages systemd prints while the system boots.
# Semantics follow systemd.service(5), systemd.unit(5) and systemd's src/core/service.c and unit.c
# (v254 and later: a start job fails as soon as the unit fails, even when it will restart). Its clients
# (guest-commands.py) speak a small framing: the request is NUL-separated words; the answer is records
# of a kind byte (o: stdout, e: stderr, c: exit code), a decimal length, ':' and the bytes.
import ctypes
import errno
import grp
import heapq
import json
import os
import pwd
import selectors
import shlex
import signal
import socket
import struct
import subprocess
import sys
import time

CONTROL_SOCKET = "/run/systemd/private"
NOTIFY_SOCKET = "/run/systemd/notify"
UNIT_DIR = "/etc/systemd/system"
JOURNAL = "/var/log/journal/lab-guest.jsonl"
CLOUD_INIT_OUTPUT = "/var/log/cloud-init-output.log"
SERVICE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"
CLOUD_INIT_VERSION = "24.4"
# The emulator's status pipe (boot-files.ts STATUS_FD): the manager keeps it, and no process it or
# cloud-init starts inherits it, to tell the host when the guest powers off.
STATUS_FD = 3
# Made once the boot is over, and removed while the guest reboots: the consoles' loops (boot-files.ts)
# start a login only while it is there, so no process of the student's exists before the units the
# boot starts (the grading agent) run, at a reboot as at the first boot.
CONSOLES_MARKER = "/run/systemd/consoles-up"


def read_json(path):
    with open(path, "rb") as handle:
        return json.load(handle)


# ---------------------------------------------------------------------------------------------------
# boot: cloud-init's stages, as guest root.

def timestamp_for_log():
    now = time.time()
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now)) + ",%03d" % int((now % 1) * 1000)


def warn(source, message):
    # How cloud-init's console handler prints a WARNING (its log format).
    print("%s - %s[WARNING]: %s" % (timestamp_for_log(), source, message), flush=True)


def module_failed(module):
    warn("util.py", "Running module %s (<module 'cloudinit.config.cc_%s'>) failed" % (module, module))


class Boot:
    def __init__(self, plan):
        self.plan = plan
        self.started = plan["startedAt"] / 1000.0
        # The delays count from here: the emulator reports the VMI Running as this process starts.
        self.delay_base = time.time()

    def uptime(self):
        return "%.2f" % (time.time() - self.started)

    def stage(self, name):
        print(
            "Cloud-init v. %s running '%s' at %s. Up %s seconds."
            % (CLOUD_INIT_VERSION, name, time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime()), self.uptime()),
            flush=True,
        )

    def wait_until(self, ms_after_start):
        delay = self.delay_base + ms_after_start / 1000.0 - time.time()
        if delay > 0:
            time.sleep(delay)

    def run(self):
        plan = self.plan
        self.wait_until(plan["initDelayMs"])
        self.stage("init")
        for line in plan["log"]:
            print(line, flush=True)
        if plan["bootcmd"]:
            self.script("bootcmd", ["/bin/sh", plan["bootcmd"]])
        self.write_files([f for f in plan["writeFiles"] if not f["defer"]])
        self.stage("modules:config")
        if plan["runcmd"]:
            os.makedirs("/var/lib/cloud/instance/scripts", 0o755, exist_ok=True)
            runcmd = "/var/lib/cloud/instance/scripts/runcmd"
            with open(plan["runcmd"], "rb") as src, open(runcmd, "wb") as dst:
                dst.write(src.read())
            os.chmod(runcmd, 0o700)
        self.wait_until(plan["runcmdDelayMs"])
        self.stage("modules:final")
        self.packages()
        self.write_files([f for f in plan["writeFiles"] if f["defer"]], module="write_files_deferred")
        if plan["runcmd"]:
            self.script("scripts_user", ["/var/lib/cloud/instance/scripts/runcmd"])
        print(
            "Cloud-init v. %s finished at %s. Datasource DataSourceNoCloud [seed=/dev/vdb].  Up %s seconds"
            % (CLOUD_INIT_VERSION, time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime()), self.uptime()),
            flush=True,
        )
        print("cloud-init: finished", flush=True)

    def script(self, module, argv):
        # As cloud-final.service runs it: root, working directory /, systemd's default PATH and no HOME.
        try:
            code = subprocess.call(
                argv, stdin=subprocess.DEVNULL, cwd="/", env={"PATH": SERVICE_PATH, "LANG": "C.UTF-8"}
            )
        except OSError as error:
            code = None
            warn("util.py", "Failed running %s: %s" % (argv[-1], error))
        if code != 0:
            if code is not None:
                warn("util.py", "Failed running %s [%s]" % (argv[-1], code))
            if module == "scripts_user":
                warn("cc_scripts_user.py", "Failed to run module scripts_user (scripts in /var/lib/cloud/instance/scripts)")
            module_failed(module)

    def write_files(self, files, module="write_files"):
        # cc_write_files: parents made as needed, the file written, then chmod and chown (default
        # root:root); the first failure fails the module and the files after it are not written.
        for entry in files:
            try:
                write_file(entry, self.plan["privileged"])
            except (OSError, KeyError) as error:
                warn("util.py", "Failed writing %s: %s" % (entry["path"], describe(error)))
                module_failed(module)
                return

    def packages(self):
        plan = self.plan
        names = plan["packages"]
        update, upgrade = plan["packageUpdate"], plan["packageUpgrade"]
        if not (names or update or upgrade):
            return
        repo = plan["image"].get("repository")
        errors = 0
        if update or upgrade:
            warn("util.py", "Package update failed")
            errors += 1
        if upgrade:
            warn("util.py", "Package upgrade failed")
            errors += 1
        if names:
            warn("util.py", "Failure when attempting to install packages: %r" % (names,))
            errors += 1
        warn("cc_package_update_upgrade_install.py", "%d failed with exceptions, re-raising the last one" % errors)
        module_failed("package_update_upgrade_install")
        manager = plan["image"]["packageManager"]
        where = (" (%s)" % repo["url"]) if repo else ""
        print(
            "cloud-init: packages: %s could not reach its repositories%s: this guest has no network, so nothing was installed"
            % (manager if manager != "none" else "the package manager", where),
            flush=True,
        )


def describe(error):
    if isinstance(error, KeyError):
        return "unknown user or group %s" % error.args[0]
    return str(error)


def write_file(entry, privileged):
    path = entry["path"]
    os.makedirs(os.path.dirname(path), 0o755, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_APPEND if entry["append"] else os.O_TRUNC)
    with open(entry["source"], "rb") as src:
        content = src.read()
    fd = os.open(path, flags, entry["mode"])
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.chmod(path, entry["mode"])
    if privileged:
        user, _, group = entry["owner"].partition(":")
        uid = pwd.getpwnam(user).pw_uid if user else -1
        gid = grp.getgrnam(group).gr_gid if group else -1
        os.chown(path, uid, gid)


def status_pipe():
    """The host's status pipe, kept from every program this process starts; None when it has none."""
    try:
        os.set_inheritable(STATUS_FD, False)
    except OSError:
        return None
    return STATUS_FD


def boot(plan_path):
    plan = read_json(plan_path)
    os.umask(0o022)
    status_fd = status_pipe()
    output_r, output_w = os.pipe()
    ready_r, ready_w = os.pipe()
    if os.fork() == 0:
        try:
            os.close(output_w)
            os.close(ready_r)
            os.setsid()
            Manager(plan, output_r, ready_w, status_fd).serve()
        except BaseException as error:  # the manager's end; the boot process reports it
            sys.stderr.write("lab-guest: service manager: %r\n" % (error,))
        finally:
            os._exit(1)
    os.close(output_r)
    os.close(ready_w)
    if status_fd is not None:
        os.close(status_fd)
    if os.read(ready_r, 1) != b"1":
        sys.stderr.write("lab-guest: the service manager did not start\n")
        return 1
    os.close(ready_r)
    # cloud-init's own output and its scripts' go through the manager, which copies them to the
    # console and to /var/log/cloud-init-output.log for as long as anything writes (a daemon runcmd
    # left behind may keep writing after cloud-init is done, as into cloud-init's tee on a real guest).
    os.dup2(output_w, 1)
    os.dup2(output_w, 2)
    os.close(output_w)
    try:
        Boot(plan).run()
    finally:
        sys.stdout.flush()
        request("boot-finished", [])
    return 0


# ---------------------------------------------------------------------------------------------------
# The service manager.

EXIT_STATUS_NAMES = {
    0: "SUCCESS", 1: "FAILURE", 2: "INVALIDARGUMENT", 3: "NOTIMPLEMENTED", 4: "NOPERMISSION",
    5: "NOTINSTALLED", 6: "NOTCONFIGURED", 7: "NOTRUNNING", 200: "CHDIR", 203: "EXEC", 216: "GROUP",
    217: "USER",
}
CLEAN_SIGNALS = (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE)
GETTY_PREFIXES = ("serial-getty@", "getty@", "autovt@", "console-getty.service", "container-getty@")


def parent_of(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def status_text(code, value):
    if code == "exited":
        return "%d/%s" % (value, EXIT_STATUS_NAMES.get(value, str(value)))
    try:
        return "%d/%s" % (value, signal.Signals(value).name[3:])
    except ValueError:
        return str(value)


def parse_timespan(text, default):
    # systemd.time(7): "90", "1min 30s", "500ms", "infinity".
    text = text.strip()
    if text == "":
        return default
    if text == "infinity":
        return float("inf")
    units = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1, "sec": 1, "second": 1, "seconds": 1,
             "m": 60, "min": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
             "d": 86400, "day": 86400, "days": 86400}
    total, number = 0.0, ""
    rest = text.replace(" ", "")
    index = 0
    try:
        while index < len(rest):
            number = ""
            while index < len(rest) and (rest[index].isdigit() or rest[index] == "."):
                number += rest[index]
                index += 1
            unit = ""
            while index < len(rest) and rest[index].isalpha():
                unit += rest[index]
                index += 1
            total += float(number) * (units[unit] if unit else 1)
        return total
    except (KeyError, ValueError):
        return default


def timespan_text(seconds):
    if seconds == float("inf"):
        return "infinity"
    if seconds >= 60 and seconds % 60 == 0:
        return "%dmin" % (seconds // 60)
    if seconds >= 1 and float(seconds).is_integer():
        return "%ds" % seconds
    return "%dms" % round(seconds * 1000)


def parse_unit_file(path, sections):
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    section = None
    pending = ""
    for raw in text.split("\n"):
        line = pending + raw.strip() if pending else raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = sections.setdefault(line[1:-1], [])
            continue
        if section is None or "=" not in line:
            continue
        key, _, value = line.partition("=")
        section.append((key.strip(), value.strip()))


class UnitConfig:
    def __init__(self, name, path):
        self.name = name
        self.path = path
        sections = {}
        parse_unit_file(path, sections)
        dropins = path + ".d"
        if os.path.isdir(dropins):
            for entry in sorted(os.listdir(dropins)):
                if entry.endswith(".conf"):
                    parse_unit_file(os.path.join(dropins, entry), sections)
        unit = dict(sections.get("Unit", []))
        self.description = unit.get("Description", "")
        self.start_limit_interval = parse_timespan(unit.get("StartLimitIntervalSec", unit.get("StartLimitInterval", "")), 10.0)
        try:
            self.start_limit_burst = int(unit.get("StartLimitBurst", "5"))
        except ValueError:
            self.start_limit_burst = 5
        service = sections.get("Service", [])
        values = {}
        self.exec_start = []
        self.environment = {}
        for key, value in service:
            if key == "ExecStart":
                if value == "":
                    self.exec_start = []
                else:
                    self.exec_start.append(value)
            elif key == "Environment":
                for assignment in shlex.split(value):
                    name, _, val = assignment.partition("=")
                    self.environment[name] = val
            else:
                values[key] = value
        self.type = values.get("Type", "simple")
        self.restart = values.get("Restart", "no")
        self.restart_sec = parse_timespan(values.get("RestartSec", ""), 0.1)
        timeout = values.get("TimeoutSec", "")
        self.timeout_start = parse_timespan(values.get("TimeoutStartSec", timeout), 90.0)
        self.timeout_stop = parse_timespan(values.get("TimeoutStopSec", timeout), 90.0)
        self.remain_after_exit = values.get("RemainAfterExit", "no") in ("yes", "true", "1", "on")
        self.working_directory = values.get("WorkingDirectory", "")
        self.user = values.get("User", "")
        self.group = values.get("Group", "")
        self.syslog_identifier = values.get("SyslogIdentifier", "")
        install = sections.get("Install", [])
        self.wanted_by = [t for k, v in install if k == "WantedBy" for t in v.split()]
        self.required_by = [t for k, v in install if k == "RequiredBy" for t in v.split()]
        self.has_install = bool(install)

    @property
    def label(self):
        return "%s - %s" % (self.name, self.description) if self.description else self.name


class Unit:
    def __init__(self, name):
        self.name = name
        self.config = None
        self.state = "inactive"
        self.sub = "dead"
        self.result = "success"
        self.main_pid = 0
        self.proc = None
        self.exec_argv = []
        self.exec_code = None
        self.exec_status = 0
        self.exec_pid = 0
        self.ready = False
        self.stopping = False
        self.n_restarts = 0
        self.starts = []
        self.start_waiters = []
        self.stop_waiters = []
        self.timer = None
        self.since = time.time()
        self.output_fd = None
        self.output_pending = b""
        self.oneshot_queue = []


class Manager:
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

    # -- Control+Alt+Delete ----------------------------------------------------------------------
    # The kernel hands the console's Control+Alt+Delete to PID 1 as SIGINT (systemd turned the
    # kernel's own reboot off with reboot(RB_DISABLE_CAD)); systemd then starts ctrl-alt-del.target,
    # which on Debian is reboot.target: the units stop, every process ends, the kernel restarts the
    # machine, and it boots again from the same disk. The VMI stays (KubeVirt sets no on_reboot, and
    # libvirt's default restarts the domain). Here the machine is the sandbox, so it stays too: the
    # manager stops the units, ends every process but the consoles' loops, and boots again as a real
    # guest's second boot does: cloud-init's per-instance modules (write_files, runcmd) are done
    # already, the enabled units start, then the consoles log in again.

    def ctrl_alt_del(self):
        if self.rebooting:
            return
        self.rebooting = True
        self.booting = True  # systemd shows job results on the console while shutting down too
        self.journal("Activating special unit ctrl-alt-del.target...")
        try:
            os.unlink(CONSOLES_MARKER)
        except OSError:
            pass
        self.tell_host("reboot")
        running = [unit for unit in self.units.values() if unit.main_pid]
        left = [len(running)]

        def stopped(unit):
            self.status(True, "Stopped %s." % unit.config.label)
            left[0] -= 1
            if left[0] == 0:
                self.restart_machine()
        for unit in running:
            self.write_console(("         Stopping %s...%s" % (unit.config.label, self.line_end)).encode())
            self.stop(unit, lambda _ok, unit=unit: stopped(unit))
        if not running:
            self.restart_machine()

    def restart_machine(self):
        self.journal("Reached target reboot.target - System Reboot.")
        self.status(True, "Reached target reboot.target - System Reboot.")
        self.write_console(("reboot: Restarting system" + self.line_end).encode())
        for pid in self.processes_to_end():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.boot_again(time.monotonic() + 5)

    def processes_to_end(self):
        """Every process of the guest but this one, its ancestors (the sandbox's), and the consoles'
        loops, which stand in for the gettys that systemd starts at each boot."""
        spared = {os.getpid()}
        pid = os.getppid()
        while pid > 0 and pid not in spared:
            spared.add(pid)
            pid = parent_of(pid)
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in spared:
                continue
            try:
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if not argv[0]:
                continue  # a kernel thread's or a zombie's
            if argv[1:2] in ([b"/run/lab-guest/console.sh"], [b"/run/lab-guest/tty1.sh"]):
                continue
            yield int(entry)

    def boot_again(self, deadline):
        if any(True for _ in self.processes_to_end()) and time.monotonic() < deadline:
            self.after(0.02, lambda: self.boot_again(deadline))
            return
        up = "Up %.2f seconds." % (time.time() - self.plan["startedAt"] / 1000.0)
        now = time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime())
        for stage in ("init", "modules:config", "modules:final"):
            self.write_console(("Cloud-init v. %s running '%s' at %s. %s%s" % (
                CLOUD_INIT_VERSION, stage, now, up, self.line_end)).encode())
        wanted = []
        for entry in sorted(os.listdir(UNIT_DIR)) if os.path.isdir(UNIT_DIR) else []:
            if entry.endswith(".target.wants") or entry.endswith(".target.requires"):
                for name in sorted(os.listdir(os.path.join(UNIT_DIR, entry))):
                    if name not in wanted and not is_getty(name):
                        wanted.append(name)
        left = [len(wanted)]

        def started(_ok):
            left[0] -= 1
            if left[0] == 0:
                self.booted_again()
        for name in wanted:
            self.start(self.unit(name), started)
        if not wanted:
            self.booted_again()

    def booted_again(self):
        self.write_console(("Cloud-init v. %s finished at %s. Datasource DataSourceNoCloud [seed=/dev/vdb].  Up %.2f seconds%s" % (
            CLOUD_INIT_VERSION, time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime()),
            time.time() - self.plan["startedAt"] / 1000.0, self.line_end)).encode())
        self.booting = False
        self.rebooting = False
        open(CONSOLES_MARKER, "w").close()
        self.tell_host("booted")

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

    # -- journalctl ------------------------------------------------------------------------------

    def journalctl(self, argv, privileged, reply):
        units, lines, output, follow = [], None, "short", False
        args = list(argv)
        while args:
            arg = args.pop(0)
            if arg in ("-u", "--unit") and args:
                units.append(normalize_unit(args.pop(0)))
            elif arg.startswith("--unit="):
                units.append(normalize_unit(arg.split("=", 1)[1]))
            elif arg.startswith("-u") and len(arg) > 2:
                units.append(normalize_unit(arg[2:]))
            elif arg in ("-n", "--lines") and args:
                lines = int(args.pop(0)) if args[0].isdigit() else lines
            elif arg.startswith("--lines="):
                lines = int(arg.split("=", 1)[1])
            elif arg.startswith("-n") and arg[2:].isdigit():
                lines = int(arg[2:])
            elif arg in ("-o", "--output") and args:
                output = args.pop(0)
            elif arg.startswith("--output="):
                output = arg.split("=", 1)[1]
            elif arg in ("-f", "--follow"):
                follow = True
            elif arg == "-e" or arg == "--pager-end":
                lines = lines if lines is not None else 1000
            elif arg.startswith("-") and not arg.startswith("--") and "u" in arg[1:]:
                flags = arg[1:]
                if flags.endswith("u") and args:
                    units.append(normalize_unit(args.pop(0)))
        if not privileged:
            reply.out(
                "Hint: You are currently not seeing messages from other users and the system.\n"
                "      Users in groups 'adm', 'systemd-journal', 'wheel' can see all messages.\n"
                "      Pass -q to turn off this notice.\n-- No entries --\n"
            ).done(0)
            return
        entries = []
        try:
            with open(JOURNAL, encoding="utf-8") as handle:
                for raw in handle:
                    try:
                        entry = json.loads(raw)
                    except ValueError:
                        continue
                    if units and entry.get("unit") not in units:
                        continue
                    entries.append(entry)
        except OSError:
            pass
        if lines is not None:
            entries = entries[-lines:] if lines else []
        if not entries:
            reply.out("-- No entries --\n")
        for entry in entries:
            if output == "cat":
                reply.out(entry["msg"] + "\n")
            else:
                reply.out("%s %s %s[%d]: %s\n" % (
                    time.strftime("%b %d %H:%M:%S", time.localtime(entry["t"])), self.hostname,
                    entry["ident"], entry["pid"], entry["msg"]))
        if follow:
            reply.err("journalctl: --follow is not emulated; showing what is there.\n")
        reply.done(0)


class Reply:
    """A client's answer, streamed as records (stdout, stderr, then the exit code) as it is produced."""

    def __init__(self, conn):
        self.conn = conn

    def send(self, kind, payload):
        if self.conn is None:
            return
        try:
            self.conn.sendall(kind + str(len(payload)).encode() + b":" + payload)
        except OSError:
            self.conn.close()
            self.conn = None

    def out(self, text):
        self.send(b"o", text.encode("utf-8", "surrogateescape"))
        return self

    def err(self, text):
        self.send(b"e", text.encode("utf-8", "surrogateescape"))
        return self

    def done(self, code):
        self.send(b"c", str(code).encode())
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def normalize_unit(name):
    if "." not in name.rsplit("/", 1)[-1]:
        return name + ".service"
    return name


def is_getty(name):
    return any(name.startswith(prefix) for prefix in GETTY_PREFIXES)


class Systemctl:
    """One systemctl command line, run inside the manager."""

    PRIVILEGED_VERBS = ("start", "stop", "restart", "try-restart", "reload-or-restart", "enable", "disable",
                        "daemon-reload", "daemon-reexec", "kill", "reset-failed", "poweroff")

    def __init__(self, manager, argv, privileged, reply):
        self.manager = manager
        self.privileged = privileged
        self.reply = reply
        self.now = False
        self.quiet = False
        self.value = False
        self.properties = []
        self.signal = signal.SIGTERM
        self.kill_whom = "all"
        self.no_block = False
        self.words = []
        args = list(argv)
        while args:
            arg = args.pop(0)
            if arg == "--now":
                self.now = True
            elif arg in ("-q", "--quiet"):
                self.quiet = True
            elif arg == "--value":
                self.value = True
            elif arg in ("-p", "--property") and args:
                self.properties += args.pop(0).split(",")
            elif arg.startswith("--property="):
                self.properties += arg.split("=", 1)[1].split(",")
            elif arg.startswith("-p") and len(arg) > 2:
                self.properties += arg[2:].split(",")
            elif arg in ("-s", "--signal") and args:
                self.signal = parse_signal(args.pop(0))
            elif arg.startswith("--signal="):
                self.signal = parse_signal(arg.split("=", 1)[1])
            elif arg.startswith("--kill-whom=") or arg.startswith("--kill-who="):
                self.kill_whom = arg.split("=", 1)[1]
            elif arg == "--no-block":
                self.no_block = True
            elif arg in ("-n", "--lines") and args:
                args.pop(0)
            elif arg.startswith("-") and arg != "-":
                continue  # --no-pager, --system, -l, --full, --no-legend, ...
            else:
                self.words.append(arg)

    def run(self):
        if not self.words:
            return self.list_units()
        verb, names = self.words[0], [normalize_unit(name) for name in self.words[1:]]
        if verb == "poweroff" and not self.privileged:
            # logind asks polkit, which refuses a user with no seat of their own.
            return self.reply.err("Call to PowerOff failed: Interactive authentication required.\n").done(1)
        if verb in self.PRIVILEGED_VERBS and not self.privileged:
            what = {"daemon-reload": "Failed to reload daemon", "daemon-reexec": "Failed to reexecute daemon",
                    "enable": "Failed to enable unit", "disable": "Failed to disable unit"}.get(verb)
            target = names[0] if names else ""
            message = what or "Failed to %s %s" % (verb, target)
            return self.reply.err("%s: Access denied\n" % message).done(4)
        handler = {
            "daemon-reload": self.noop, "daemon-reexec": self.noop, "start": self.start, "stop": self.stop,
            "restart": self.restart, "try-restart": self.restart, "reload-or-restart": self.restart,
            "enable": self.enable, "disable": self.disable, "is-active": self.is_active,
            "is-failed": self.is_failed, "is-enabled": self.is_enabled, "status": self.status, "show": self.show,
            "kill": self.kill, "reset-failed": self.reset_failed, "cat": self.cat, "list-units": self.list_units,
            "poweroff": self.poweroff,
        }.get(verb)
        if handler is None:
            return self.reply.err("Unknown command verb '%s'.\n" % verb).done(1)
        if verb in ("daemon-reload", "daemon-reexec", "list-units", "poweroff"):
            return handler()
        if not names and verb not in ("reset-failed",):
            return self.reply.err("Too few arguments.\n").done(1)
        handler(names)

    def noop(self):
        self.reply.done(0)

    def poweroff(self):
        if self.manager.power_off():
            return self.reply.done(0)
        self.reply.err("Failed to power off system: the emulator gave this guest no way to.\n").done(1)

    # Special units: the console's getty (the emulator's console stands in for it) and targets.
    @staticmethod
    def special(name):
        return is_getty(name) or name.endswith(".target")

    def exists(self, name):
        return self.special(name) or os.path.isfile(os.path.join(UNIT_DIR, name))

    def run_jobs(self, names, job, verb):
        """Runs job(unit, done) for each unit in turn; the reply goes out when the last one is over."""
        names = list(names)
        failures = []
        missing = []

        def next_one(_ok=True):
            if not names:
                return self.reply.done(5 if missing else 1 if failures else 0)
            name = names.pop(0)
            if self.special(name):
                return next_one()
            if not self.exists(name):
                missing.append(name)
                self.reply.err("Failed to %s %s: Unit %s not found.\n" % (verb, name, name))
                return next_one()
            unit = self.manager.unit(name)

            def finished(ok):
                if not ok:
                    failures.append(name)
                    self.job_error(unit)
                next_one()
            job(unit, finished)

        next_one()

    def job_error(self, unit):
        config = unit.config
        if config is None or not os.path.isfile(os.path.join(UNIT_DIR, unit.name)):
            self.reply.err("Failed to start %s: Unit %s not found.\n" % (unit.name, unit.name))
            return
        explanations = {
            "resources": "of unavailable resources or another system error",
            "protocol": "the service did not take the steps required by its unit configuration",
            "timeout": "a timeout was exceeded",
            "exit-code": "the control process exited with error code",
            "signal": "a fatal signal was delivered to the control process",
            "core-dump": "a fatal signal was delivered causing the control process to dump core",
            "watchdog": "the service failed to send watchdog ping",
            "start-limit": "start of the service was attempted too often",
        }
        explanation = explanations.get(unit.result)
        head = ("Job for %s failed because %s." % (unit.name, explanation)) if explanation else ("Job for %s failed." % unit.name)
        self.reply.err('%s\nSee "systemctl status %s" and "journalctl -xeu %s" for details.\n' % (head, unit.name, unit.name))

    def start(self, names):
        if self.no_block:
            for name in names:
                if self.exists(name) and not self.special(name):
                    self.manager.start(self.manager.unit(name))
            return self.reply.done(0)
        self.run_jobs(names, lambda unit, done: self.manager.start(unit, done), "start")

    def stop(self, names):
        self.run_jobs(names, lambda unit, done: self.manager.stop(unit, done), "stop")

    def restart(self, names):
        manager = self.manager

        def job(unit, done):
            manager.stop(unit, lambda _ok: manager.start(unit, done))
        self.run_jobs(names, job, "restart")

    def enable(self, names):
        for name in names:
            if self.special(name):
                continue
            path = os.path.join(UNIT_DIR, name)
            if not os.path.isfile(path):
                self.reply.err("Failed to enable unit: Unit file %s does not exist.\n" % name)
                return self.reply.done(1)
            config = UnitConfig(name, path)
            if not config.has_install:
                self.reply.err(
                    "The unit files have no installation config (WantedBy=, RequiredBy=, UpheldBy=,\n"
                    "Also=, or Alias= settings in the [Install] section, and DefaultInstance= for\n"
                    "template units). This means they are not meant to be enabled or disabled using systemctl.\n")
            for target, suffix in [(t, ".wants") for t in config.wanted_by] + [(t, ".requires") for t in config.required_by]:
                directory = os.path.join(UNIT_DIR, target + suffix)
                link = os.path.join(directory, name)
                os.makedirs(directory, 0o755, exist_ok=True)
                if not os.path.lexists(link):
                    os.symlink(path, link)
                    self.reply.err("Created symlink %s \u2192 %s.\n" % (link, path))
        if not self.now:
            return self.reply.done(0)
        self.start(names)

    def disable(self, names):
        for name in names:
            if self.special(name):
                continue
            for entry in sorted(os.listdir(UNIT_DIR)) if os.path.isdir(UNIT_DIR) else []:
                link = os.path.join(UNIT_DIR, entry, name)
                if (entry.endswith(".wants") or entry.endswith(".requires")) and os.path.islink(link):
                    os.unlink(link)
                    self.reply.err('Removed "%s".\n' % link)
        if not self.now:
            return self.reply.done(0)
        self.stop(names)

    def enabled_state(self, name):
        if self.special(name):
            return "static"
        path = os.path.join(UNIT_DIR, name)
        if not os.path.isfile(path):
            return None
        if os.path.isdir(UNIT_DIR):
            for entry in os.listdir(UNIT_DIR):
                if (entry.endswith(".wants") or entry.endswith(".requires")) and os.path.lexists(
                        os.path.join(UNIT_DIR, entry, name)):
                    return "enabled"
        return "disabled" if UnitConfig(name, path).has_install else "static"

    def active_state(self, name):
        if self.special(name):
            return "active", "running"
        unit = self.manager.units.get(name)
        if unit is None:
            return "inactive", "dead"
        return unit.state, unit.sub

    def is_active(self, names):
        states = [self.active_state(name)[0] for name in names]
        if not self.quiet:
            self.reply.out("".join(state + "\n" for state in states))
        self.reply.done(0 if "active" in states else 3)

    def is_failed(self, names):
        states = [self.active_state(name)[0] for name in names]
        if not self.quiet:
            self.reply.out("".join(state + "\n" for state in states))
        self.reply.done(0 if "failed" in states else 1)

    def is_enabled(self, names):
        states = [self.enabled_state(name) for name in names]
        for name, state in zip(names, states):
            if state is None:
                self.reply.err("Failed to get unit file state for %s: No such file or directory\n" % name)
            elif not self.quiet:
                self.reply.out(state + "\n")
        self.reply.done(0 if any(state in ("enabled", "static") for state in states) else 1)

    def kill(self, names):
        for name in names:
            unit = self.manager.units.get(name)
            if unit is not None:
                self.manager.kill_unit(unit, self.signal, self.kill_whom)
        self.reply.done(0)

    def reset_failed(self, names):
        targets = names or list(self.manager.units)
        for name in targets:
            unit = self.manager.units.get(name)
            if unit is not None:
                unit.starts = []
                if unit.state == "failed":
                    self.manager.set_state(unit, "inactive", "dead")
                    unit.result = "success"
        self.reply.done(0)

    def cat(self, names):
        for name in names:
            path = os.path.join(UNIT_DIR, name)
            if not os.path.isfile(path):
                self.reply.err("No files found for %s.\n" % name)
                return self.reply.done(1)
            with open(path, encoding="utf-8", errors="replace") as handle:
                self.reply.out("# %s\n%s" % (path, handle.read()))
        self.reply.done(0)

    def properties_of(self, name):
        unit = self.manager.units.get(name)
        state, sub = self.active_state(name)
        path = os.path.join(UNIT_DIR, name)
        config = None
        if os.path.isfile(path):
            config = unit.config if unit is not None and unit.config is not None else UnitConfig(name, path)
        codes = {"exited": 1, "killed": 2, "dumped": 3}
        return [
            ("Type", config.type if config else ""),
            ("Restart", config.restart if config else "no"),
            ("RestartUSec", timespan_text(config.restart_sec) if config else "100ms"),
            ("TimeoutStartUSec", timespan_text(config.timeout_start) if config else "1min 30s"),
            ("MainPID", str(unit.main_pid if unit else 0)),
            ("ExecMainPID", str(unit.exec_pid if unit else 0)),
            ("ExecMainCode", str(codes.get(unit.exec_code, 0) if unit else 0)),
            ("ExecMainStatus", str(unit.exec_status if unit else 0)),
            ("NRestarts", str(unit.n_restarts if unit else 0)),
            ("Result", unit.result if unit else "success"),
            ("Id", name),
            ("Description", config.description if config else ""),
            ("LoadState", "loaded" if config or self.special(name) else "not-found"),
            ("ActiveState", state),
            ("SubState", sub),
            ("FragmentPath", path if config else ""),
            ("UnitFileState", self.enabled_state(name) or ""),
        ]

    def show(self, names):
        for index, name in enumerate(names):
            if index:
                self.reply.out("\n")
            for key, value in self.properties_of(name):
                if self.properties and key not in self.properties:
                    continue
                self.reply.out((value if self.value else "%s=%s" % (key, value)) + "\n")
        self.reply.done(0)

    def status(self, names):
        code = 0
        for index, name in enumerate(names):
            if index:
                self.reply.out("\n")
            if not self.exists(name):
                self.reply.err("Unit %s could not be found.\n" % name)
                code = 4
                continue
            code = max(code, self.status_one(name))
        self.reply.done(code)

    def status_one(self, name):
        unit = self.manager.units.get(name)
        state, sub = self.active_state(name)
        if self.special(name):
            self.reply.out("\u25cf %s\n     Loaded: loaded (emulated: the emulator's serial console stands in for it)\n"
                           "     Active: active (running)\n" % name)
            return 0
        path = os.path.join(UNIT_DIR, name)
        config = unit.config if unit is not None and unit.config is not None else UnitConfig(name, path)
        bullet = {"active": "\u25cf", "failed": "\u00d7", "activating": "\u25cf", "deactivating": "\u25cf"}.get(state, "\u25cb")
        since = ""
        if unit is not None:
            ago = int(time.time() - unit.since)
            since = " since %s; %ds ago" % (time.strftime("%a %Y-%m-%d %H:%M:%S %Z", time.localtime(unit.since)), ago)
        result = " (Result: %s)" % unit.result if unit is not None and unit.result != "success" and state != "active" else ""
        # As systemctl prints it: "failed (Result: exit-code)", "activating (auto-restart) (Result: ...)".
        active = "failed%s" % result if state == "failed" else "%s (%s)%s" % (state, sub, result)
        lines = [
            "%s %s" % (bullet, config.label),
            "     Loaded: loaded (%s; %s; preset: disabled)" % (path, self.enabled_state(name)),
            "     Active: %s%s" % (active, since),
        ]
        if unit is not None and unit.main_pid:
            lines.append("   Main PID: %d (%s)" % (unit.main_pid, os.path.basename(unit.exec_argv[0]) if unit.exec_argv else "?"))
            lines.append("     CGroup: /system.slice/%s" % name)
            lines.append("             \u2514\u2500%d %s" % (unit.main_pid, " ".join(unit.exec_argv)))
        elif unit is not None and unit.exec_code is not None:
            status = "code=%s, status=%s" % (unit.exec_code, status_text(unit.exec_code, unit.exec_status))
            lines.append("    Process: %d ExecStart=%s (%s)" % (unit.exec_pid, " ".join(unit.exec_argv), status))
            lines.append("   Main PID: %d (%s)" % (unit.exec_pid, status))
        self.reply.out("\n".join(lines) + "\n")
        if self.privileged:
            entries = []
            try:
                with open(JOURNAL, encoding="utf-8") as handle:
                    for raw in handle:
                        entry = json.loads(raw)
                        if entry.get("unit") == name:
                            entries.append(entry)
            except (OSError, ValueError):
                pass
            if entries:
                self.reply.out("\n")
            for entry in entries[-10:]:
                self.reply.out("%s %s %s[%d]: %s\n" % (
                    time.strftime("%b %d %H:%M:%S", time.localtime(entry["t"])), self.manager.hostname,
                    entry["ident"], entry["pid"], entry["msg"]))
        return 0 if state == "active" else 3

    def list_units(self, _names=None):
        self.reply.out("  UNIT LOAD ACTIVE SUB DESCRIPTION\n")
        for name, unit in sorted(self.manager.units.items()):
            if unit.config is None:
                continue
            self.reply.out("  %s loaded %s %s %s\n" % (name, unit.state, unit.sub, unit.config.description))
        self.reply.done(0)


def parse_signal(text):
    text = text.upper()
    if text.isdigit():
        return int(text)
    if not text.startswith("SIG"):
        text = "SIG" + text
    return getattr(signal, text, signal.SIGTERM)


# ---------------------------------------------------------------------------------------------------
# The boot process's own request (guest-commands.py holds the guest's systemctl and journalctl).

def request(tool, args):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(CONTROL_SOCKET)
    client.sendall(b"\0".join(arg.encode() for arg in [tool] + args))
    client.shutdown(socket.SHUT_WR)
    while client.recv(65536):
        pass
    client.close()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "boot":
        return boot(sys.argv[2])
    sys.stderr.write("usage: guest-system.py boot PLAN\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
