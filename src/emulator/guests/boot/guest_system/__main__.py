# The inside of an emulated guest's system, run as guest root by the host's python3 (mounted read-only
# at /run/lab-guest/bin/python3, so it works on images that ship no python3; standard library only,
# Python 3.9+). `guest-system.pyz boot PLAN` starts the service manager, then runs cloud-init's stages
# (bootcmd, write_files, packages, write_files with defer, runcmd) in the order of cloud-init's
# cloud.cfg, and returns when cloud-init has finished, as cloud-final.service does on a real guest. The
# manager lives on for the guest's life.
#
# The service manager stands in for systemd (PID 1 on a real guest) for what the boot contract needs:
# units in /etc/systemd/system, Type=simple|exec|notify|oneshot, Restart=, RestartSec=, TimeoutStartSec=,
# the start rate limit, a journal, and the console messages systemd prints while the system boots.
# Semantics follow systemd.service(5), systemd.unit(5) and systemd's src/core/service.c and unit.c
# (v254 and later: a start job fails as soon as the unit fails, even when it will restart). Its clients
# (guest-commands.py) speak a small framing: the request is NUL-separated words; the answer is records
# of a kind byte (o: stdout, e: stderr, c: exit code), a decimal length, ':' and the bytes.
#
# The modules of this folder travel as one zip of their compiled files (guest-dir.ts), whose folder
# python3 puts first on sys.path: they import each other by their plain names, none a stdlib one.
import sys

from cloud_init_stages import boot


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "boot":
        return boot(sys.argv[2])
    sys.stderr.write("usage: guest-system.py boot PLAN\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
