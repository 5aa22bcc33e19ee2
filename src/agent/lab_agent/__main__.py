"""Lab Console's lab agent (docs/agent.md): the program's entry, run by systemd as root.

python3 -I runs this folder, or lab_agent.pyz, the zip of it the BFF delivers (docs/agent.md,
"Delivery"); -I keeps the student's environment, user site and working folder off sys.path, so only
these root-owned modules are imported. The same program run with --file-helper is the student's side
of a file transfer (files.py), started by the agent itself as the student.

Trusts: its flags and the config file, which only root can write. Trusts nothing that a request
carries: server.py verifies every request before any module acts on it.
"""

import os
import signal
import socket
import sys

from agent import Agent
from config import ConfigError, USAGE, VERSION, load_config
from files import file_helper
from run_as import run_as_mismatch
from server import Handler, Server


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
