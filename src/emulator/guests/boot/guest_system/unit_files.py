# What the service manager knows of a unit before it runs it: unit files parsed (systemd.unit(5),
# systemd.time(7) timespans), a unit's configuration and its running state, exit status names, and
# the unit and signal names systemctl and journalctl take.
import os
import shlex
import signal
import time


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


def normalize_unit(name):
    if "." not in name.rsplit("/", 1)[-1]:
        return name + ".service"
    return name


def is_getty(name):
    return any(name.startswith(prefix) for prefix in GETTY_PREFIXES)


def parse_signal(text):
    text = text.upper()
    if text.isdigit():
        return int(text)
    if not text.startswith("SIG"):
        text = "SIG" + text
    return getattr(signal, text, signal.SIGTERM)
