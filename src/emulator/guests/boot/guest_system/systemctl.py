# systemctl inside the service manager: one command line's verbs (start, stop, enable, status, show,
# list-units...) run against the manager's units, answered through a Reply.
import json
import os
import signal
import time

from constants import JOURNAL, UNIT_DIR
from unit_files import UnitConfig, is_getty, normalize_unit, parse_signal, status_text, timespan_text


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
