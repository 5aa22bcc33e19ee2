# The guest's fixed places and facts, which the boot and the service manager share: the manager's
# sockets, the unit folder, the journal, cloud-init's log and version, the host's status pipe and the
# consoles' marker; and the reading of the host's JSON plans.
import json


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
