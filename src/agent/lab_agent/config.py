"""The agent's settings and the numbers of its wire protocol.

Settings: flags win over LAB_AGENT_* variables, which win over the config file and the defaults. All
three come from root (the unit, /etc/lab-agent/config.json): nothing here is read from the student's
home or environment.
"""

import errno
import json
import re
import struct


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
        "Usage: python3 -I lab_agent.pyz [--config FILE] [options]",
        "",
        "Options (each also settable as a LAB_AGENT_* variable or a key of the JSON config file):",
        "  --config FILE        JSON config file, env LAB_AGENT_CONFIG (default %s, if present)"
        % DEFAULT_CONFIG_FILE,
    ]
    + ["  %-20s %s, env %s" % (flag + " VALUE", text, env) for _, flag, env, text in SETTINGS]
    + ["  --help               show this text"]
)


class ConfigError(Exception):
    def __init__(self, problems):
        super().__init__("Invalid lab-agent configuration:\n  " + "\n  ".join(problems))


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
