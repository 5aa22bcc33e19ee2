"""Whom checks, terminals and file transfers run as: the student's account (docs/agent.md, "Checks").

Trusts: the system's account database (/etc/passwd and groups), which is root's. The home, the shell
and every file in it belong to the student and are never trusted.
"""

import os
import pwd

from config import DEFAULTS
from http_error import HttpError


# Checks run with this primary group (nobody's), the student's own groups as supplementary ones. The
# kernel lets a process open another's /proc/PID/fd or ptrace it only when its uid AND gid match, so
# the student's own programs cannot write a score line into a running check or rewrite it.
CHECK_GID = 65534


class RunAs:
    def __init__(self, user, uid, gid, groups, home, switch, own_gid):
        self.user = user
        self.uid = uid
        self.gid = gid
        # The user's own primary group: files written into the home get it, as the student's would.
        self.own_gid = own_gid
        self.groups = groups
        self.home = home
        # True when the agent is root and the checks' user is not.
        self.switch = switch


def resolve_run_as(config):
    """Per request, not at start-up: cloud-init may create the account after the agent started."""
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(config["user"])
        except KeyError:
            raise HttpError(503, "run_as_unavailable", 'There is no user "%s" (yet).' % config["user"])
        groups = os.getgrouplist(entry.pw_name, entry.pw_gid)
        switch = entry.pw_uid != 0
        gid = CHECK_GID if switch else entry.pw_gid
        run_as = RunAs(entry.pw_name, entry.pw_uid, gid, groups, entry.pw_dir, switch, entry.pw_gid)
    else:
        entry = pwd.getpwuid(os.geteuid())
        run_as = RunAs(entry.pw_name, entry.pw_uid, entry.pw_gid, [], entry.pw_dir, False, entry.pw_gid)
    if config["home"] is not None:
        run_as.home = config["home"]
    if not os.path.isdir(run_as.home):
        raise HttpError(
            503,
            "run_as_unavailable",
            'The home directory %s of user "%s" does not exist.' % (run_as.home, run_as.user),
        )
    return run_as


def run_as_mismatch(config):
    if os.geteuid() == 0 or config["user"] == DEFAULTS["user"]:
        return None
    me = pwd.getpwuid(os.geteuid()).pw_name
    if config["user"] == me:
        return None
    return 'lab-agent: not running as root, so checks run as "%s", not "%s".' % (me, config["user"])
