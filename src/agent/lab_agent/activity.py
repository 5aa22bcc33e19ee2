"""Activity (/v1/activity): what the BFF's idle handling asks about besides console input.

Trusts: the kernel's view (/proc) and utmp, which only root writes. What the student's processes do
is counted, never read or believed; the agent's own checks are left out of the count.
"""

import os
import stat
import struct


# struct utmp as glibc writes it on Linux (64-bit and 32-bit alike): type, pid, line, id, user, host,
# exit status, session, time, address, padding.
UTMP = struct.Struct("<hxxi32s4s32s256shhiii4i20x")
UTMP_FILES = ("/run/utmp", "/var/run/utmp")
USER_PROCESS = 7


def cpu_ticks(pid):
    """utime + stime + cutime + cstime of /proc/PID/stat: its CPU time and that of children it waited for."""
    with open("/proc/%d/stat" % pid, "rb") as stat:
        text = stat.read().decode("ascii", "replace")
    fields = text[text.rindex(")") + 2 :].split()
    # After the command: state is field 3, so utime (14) .. cstime (17) are fields[11:15], pgrp (5) fields[2].
    return sum(int(value) for value in fields[11:15]), int(fields[2])


def student_cpu(uid, skip_groups):
    """CPU seconds used by the student's processes (and their waited-for children), and how many there are."""
    ticks = 0
    count = 0
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        pid = int(entry)
        try:
            if os.stat("/proc/%d" % pid).st_uid != uid:
                continue
            used, group = cpu_ticks(pid)
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        # The agent's own checks run as the student too; a grading run is not the student at work.
        if skip_groups.contains(group):
            continue
        ticks += used
        count += 1
    return ticks / os.sysconf("SC_CLK_TCK"), count


# The VM's screen (the VGA console): a graphical lab's user data logs the student in there by itself,
# and what is typed there comes through the BFF's screen, which counts it, as the serial console's.
SCREEN_TTY = "tty1"


def logins(serial_tty, now):
    """Who is logged in on a terminal other than the consoles' autologins (the serial console's and the
    screen's), and how long each has been idle (the terminal's access time, as w(1) reads it)."""
    serial = os.path.basename(serial_tty)
    for path in UTMP_FILES:
        try:
            with open(path, "rb") as utmp:
                data = utmp.read(UTMP.size * 1024)
            break
        except OSError:
            continue
    else:
        return []
    found = []
    for offset in range(0, len(data) - UTMP.size + 1, UTMP.size):
        record = UTMP.unpack_from(data, offset)
        kind, pid, line, user = record[0], record[1], record[2], record[4]
        line = line.split(b"\0", 1)[0].decode("utf-8", "replace")
        if kind != USER_PROCESS or line in ("", serial, SCREEN_TTY, "console") or "/" in line.replace("pts/", ""):
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue  # a stale record: its session ended without logging out
        except PermissionError:
            pass
        try:
            idle = max(0, int(now - os.stat("/dev/" + line).st_atime))
        except OSError:
            continue
        found.append({"user": user.split(b"\0", 1)[0].decode("utf-8", "replace"), "tty": line, "idleSeconds": idle})
    return found
