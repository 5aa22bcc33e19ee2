# An emulated guest's filesystem, made by the sandbox's root (real root, or root of a user namespace)
# before anything of the guest runs, with the host's python3 (standard library only, Python 3.9+):
#   - /usr/bin and /usr/sbin (and /bin, /sbin where they are directories) hold only the image's
#     commands the host has, and the emulator's systemctl and package manager (guest-bin.ts);
#   - the host binaries the emulator's own scripts need are bound under /run/lab-guest/bin;
#   - /etc is the guest's own, in memory: guest root may change it; it holds the generated passwd,
#     group, shadow, hosts... and a copy of the few host files the sandbox mounted there (what others
#     may read of them);
#   - the guest's writable space is one disk of a fixed size, as a VM's is: a tmpfs holding its home,
#     /tmp, and its own, empty /usr/local, /var and /root; writing beyond it fails with ENOSPC;
#   - /proc/sys, /proc/sysrq-trigger and the rest of what Docker's default profile protects are
#     read-only or masked: guest root is uid 0 and would otherwise write the host kernel's settings.
# Then it execs the plan's next command (init.sh, through a user namespace of one uid when the emulator
# runs without root, after opening ports below 1024 to that uid), with the guest's processes capped.
#
# The plan is one entry a line, fields separated by tabs (boot-files.ts writes it): no json, whose
# import alone would cost this step more than its mounts do.
import ctypes
import os
import resource
import stat
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC = 32, 4096, 16384
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
STAGE = "/run/lab-guest-setup"

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]


def encode(value):
    return None if value is None else value.encode()


def mount(source, target, fstype, flags, data=None):
    if libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data)) != 0:
        code = ctypes.get_errno()
        raise OSError(code, "mount %s on %s: %s" % (source or fstype, target, os.strerror(code)))


def umount(target):
    if libc.umount2(encode(target), MNT_DETACH) != 0:
        code = ctypes.get_errno()
        raise OSError(code, "umount %s: %s" % (target, os.strerror(code)))


def kept_flags(path):
    # Inside a user namespace a remount must keep the flags the mount was given outside (they are
    # locked), atime flags included.
    flags = os.statvfs(path).f_flag
    kept = 0
    for st_flag, ms_flag in (
        (os.ST_NOSUID, MS_NOSUID),
        (os.ST_NODEV, MS_NODEV),
        (os.ST_NOEXEC, MS_NOEXEC),
        (os.ST_NOATIME, MS_NOATIME),
        (os.ST_NODIRATIME, MS_NODIRATIME),
        (os.ST_RELATIME, MS_RELATIME),
    ):
        if flags & st_flag:
            kept |= ms_flag
    return kept


def bind_read_only(source, target, recursive=False, extra=MS_NOSUID | MS_NODEV):
    # A new bind mount is writable whatever its source's mount says: it must be made read-only, or
    # guest root could write the host's files.
    mount(source, target, None, MS_BIND | (MS_REC if recursive else 0))
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept_flags(source) | extra)


def touch(path, mode):
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, mode))


def read_plan(path):
    plan = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle.read().split("\n"):
            if line:
                fields = line.split("\t")
                plan.setdefault(fields[0], []).append(fields[1:])
    return plan


def setup(plan_path):
    plan = read_plan(plan_path)
    privileged = plan["privileged"][0][0] == "1"
    if not privileged:
        # Root of the user namespace that owns the guest's network namespace may do this; the guest,
        # one uid in a nested namespace, then binds any port (the grading agent's 899).
        with open("/proc/sys/net/ipv4/ip_unprivileged_port_start", "w") as handle:
            handle.write("0")
    os.mkdir(STAGE, 0o700)
    staged = {}
    for index, (directory,) in enumerate(plan.get("bindir", [])):
        place = "%s/%d" % (STAGE, index)
        os.mkdir(place, 0o700)
        mount(directory, place, None, MS_BIND)
        staged[directory] = place

    def host_file(path):
        directory, name = os.path.split(path)
        return "%s/%s" % (staged[directory], name) if directory in staged else path

    for target, source in plan.get("plumbing", []):
        bind_read_only(host_file(source), target)
    for (directory,) in plan.get("bindir", []):
        mount("tmpfs", directory, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for (path,) in plan.get("file", []):
        touch(path, 0o755)
        bind_read_only(host_file(path), path)
    for path, text in plan.get("link", []):
        os.symlink(text, path)
    for path, source in plan.get("emulated", []):
        touch(path, 0o755)
        bind_read_only(source, path)
    setup_etc(plan, privileged)
    disk = own_disk(plan, privileged)
    own_directories(plan, disk)
    cover_proc()
    # The disk's own mount can go: its bind mounts keep it.
    umount(disk)
    os.rmdir(disk)
    for place in staged.values():
        umount(place)
        os.rmdir(place)
    os.rmdir(STAGE)
    for (count,) in plan.get("nproc", []):
        # A second line behind the cgroup's pids.max, and the only one where the host gives no cgroup.
        # The kernel counts per uid, and per user namespace, so the count is this guest's alone: as
        # root its student is a uid of its own (guest root, uid 0, is exempt); without root the guest
        # is one uid in a user namespace of its own.
        resource.setrlimit(resource.RLIMIT_NPROC, (int(count), int(count)))
    then = plan["then"][0]
    os.execv(then[0], then)


def own_disk(plan, privileged):
    # A tmpfs: in memory, but its pages are charged to the guest's memory cgroup, which holds the
    # guest's memory and its disk (guest-limits.ts). The mount points are empty directories of the
    # sandbox's read-only root.
    size, home, home_mode, uid = plan["disk"][0]
    disk = STAGE + "/disk"
    os.mkdir(disk, 0o700)
    mount("tmpfs", disk, "tmpfs", MS_NOSUID | MS_NODEV, "size=%s,mode=0755" % size)
    for name, target, mode, owner in (("home", home, int(home_mode, 8), int(uid)), ("tmp", "/tmp", 0o1777, 0)):
        place = disk + "/" + name
        os.mkdir(place)
        os.chmod(place, mode)
        if privileged:
            os.chown(place, owner, owner)
        mount(place, target, None, MS_BIND)
    return disk


def own_directories(plan, disk):
    for path, mode, dirs, links in (
        ("/usr/local", "0755", [name for (name,) in plan.get("usrlocal", [])], []),
        (
            "/var",
            "0755",
            ["cache", "lib", "local", "log", "log/journal", "mail", "opt", "spool"],
            [("tmp", "../tmp"), ("run", "../run"), ("lock", "../run/lock")],
        ),
        ("/root", "0700", [], []),
    ):
        if not os.path.isdir(path):
            continue
        place = disk + "/" + path.strip("/").replace("/", "-")
        os.mkdir(place)
        os.chmod(place, int(mode, 8))
        mount(place, path, None, MS_BIND)
        for name in dirs:
            os.mkdir("%s/%s" % (path, name), 0o755)
        for name, text in links:
            os.symlink(text, "%s/%s" % (path, name))
    os.mkdir("/run/lock", 0o755)


def read_etc(path, relative, found, depth=0):
    # What others may read of the sandbox's /etc, as (relative path, lstat, link text or content).
    # As root, guest root has CAP_DAC_OVERRIDE: a file only root may read must not reach its copy.
    for entry in sorted(os.listdir(path)):
        source, name = path + "/" + entry, (relative + "/" + entry).lstrip("/")
        info = os.lstat(source)
        if stat.S_ISLNK(info.st_mode):
            found.append((name, info, os.readlink(source)))
        elif stat.S_ISDIR(info.st_mode) and info.st_mode & 0o005 == 0o005 and depth < 8:
            found.append((name, info, None))
            read_etc(source, name, found, depth + 1)
        elif stat.S_ISREG(info.st_mode) and info.st_mode & 0o004:
            with open(source, "rb") as handle:
                found.append((name, info, handle.read()))


def write_file(path, content, mode):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def setup_etc(plan, privileged):
    # The guest's /etc is its own, in memory, so that guest root may change it as on a real guest: a
    # copy of the few host files the sandbox mounted there (sandbox.ts: what programs read to run, never
    # the host's users, keys or an operator's files), the generated passwd, group, shadow, hosts...,
    # and an empty /etc/systemd/system for the guest's units. Copied, not an overlay: overlayfs would
    # show the placeholders under the sandbox's bind mounts, not the files.
    found = []
    read_etc("/etc", "", found)
    mount("tmpfs", "/etc", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for name, info, data in found:
        path = "/etc/" + name
        if stat.S_ISLNK(info.st_mode):
            os.symlink(data, path)
        elif data is None:
            os.mkdir(path, 0o700)
            os.chmod(path, stat.S_IMODE(info.st_mode))
        else:
            write_file(path, data, stat.S_IMODE(info.st_mode))
        if privileged:
            os.lchown(path, info.st_uid, info.st_gid)
    for name, source, mode, uid, gid in plan.get("etc", []):
        path = "/etc/" + name
        os.makedirs(os.path.dirname(path), 0o755, exist_ok=True)
        with open(source, "rb") as handle:
            write_file(path, handle.read(), int(mode, 8))
        if privileged:
            os.chown(path, int(uid), int(gid))
    os.makedirs("/etc/systemd/system", 0o755, exist_ok=True)


# What Docker's default profile makes read-only or masks in /proc (ReadonlyPaths and MaskedPaths in
# moby's oci/defaults.go).
PROC_READ_ONLY = ("sys", "sysrq-trigger", "bus", "fs", "irq")
PROC_MASKED = ("kcore", "keys", "latency_stats", "timer_list", "timer_stats", "sched_debug", "acpi", "scsi")


def cover_proc():
    for name in PROC_READ_ONLY:
        path = "/proc/" + name
        if os.path.lexists(path):
            bind_read_only(path, path, recursive=True, extra=MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in PROC_MASKED:
        path = "/proc/" + name
        if os.path.isdir(path):
            mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0")
        elif os.path.exists(path):
            bind_read_only("/dev/null", path)


if __name__ == "__main__":
    try:
        setup(sys.argv[1])
    except (OSError, KeyError, IndexError, ValueError) as error:
        sys.stderr.write("lab-guest setup: %s\n" % (error,))
        sys.exit(1)
