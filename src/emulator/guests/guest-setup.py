# An emulated guest's filesystem, made by the sandbox's root (real root, or root of a user namespace)
# before anything of the guest runs, with the host's python3 (standard library only, Python 3.9+):
#   - /usr/bin and /usr/sbin (and /bin, /sbin where they are directories) hold only the image's
#     commands the host has, and the emulator's systemctl and package manager (guest-bin.ts);
#   - the host binaries the emulator's own scripts need are bound under /run/lab-guest/bin;
#   - /etc is the host's under an overlay in memory: guest root may change it, the generated passwd,
#     group, shadow, hosts... are in it, the host's files only root may read are whited out, and the
#     host's /etc/systemd/system is hidden;
#   - /usr/local, /var and /root are the guest's own, empty, in memory;
#   - /proc/sys, /proc/sysrq-trigger and the rest of what Docker's default profile protects are
#     read-only or masked: guest root is uid 0 and would otherwise write the host kernel's settings.
# Then it execs the plan's next command (init.sh, through a user namespace of one uid when the emulator
# runs without root, after opening ports below 1024 to that uid).
#
# The plan is one entry a line, fields separated by tabs (boot-files.ts writes it): no json, whose
# import alone would cost this step more than its mounts do.
import ctypes
import os
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
    own_directories(plan)
    cover_proc()
    for place in staged.values():
        umount(place)
        os.rmdir(place)
    os.rmdir(STAGE)
    then = plan["then"][0]
    os.execv(then[0], then)


def own_directories(plan):
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
        mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=" + mode)
        for name in dirs:
            os.mkdir("%s/%s" % (path, name), 0o755)
        for name, text in links:
            os.symlink(text, "%s/%s" % (path, name))
    os.mkdir("/run/lock", 0o755)


def setup_etc(plan, privileged):
    # The guest's /etc: the host's, read-only underneath, with an upper layer in memory. Guest root
    # may then change it as on a real guest.
    base = STAGE + "/etc"
    os.mkdir(base, 0o700)
    mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    upper, work = base + "/upper", base + "/work"
    os.mkdir(upper, 0o755)
    os.mkdir(work, 0o755)

    def upper_dir(relative):
        # Directories in the upper layer take their mode and owner from the host's, as overlayfs's
        # copy-up would.
        path, lower = upper, "/etc"
        for part in [p for p in relative.split("/") if p]:
            path, lower = path + "/" + part, lower + "/" + part
            if os.path.isdir(path):
                continue
            os.mkdir(path, 0o755)
            if os.path.isdir(lower) and not os.path.islink(lower):
                info = os.lstat(lower)
                os.chmod(path, stat.S_IMODE(info.st_mode))
                if privileged:
                    os.chown(path, info.st_uid, info.st_gid)
        return path

    generated = set()
    for name, source, mode, uid, gid in plan.get("etc", []):
        generated.add(name)
        path = upper_dir(os.path.dirname(name)) + "/" + os.path.basename(name)
        with open(source, "rb") as src, open(path, "wb") as dst:
            dst.write(src.read())
        os.chmod(path, int(mode, 8))
        if privileged:
            os.chown(path, int(uid), int(gid))
    if privileged:
        # Guest root is uid 0 with CAP_DAC_OVERRIDE: the host's SSH host keys, TLS keys and such
        # must not be there for it to read.
        for (relative,) in plan.get("hidden", []):
            if relative in generated:
                continue
            path = upper_dir(os.path.dirname(relative)) + "/" + os.path.basename(relative)
            if not os.path.lexists(path):
                os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(0, 0))  # an overlayfs whiteout
    opaque = upper_dir("systemd") + "/system"
    os.mkdir(opaque, 0o755)
    os.setxattr(opaque, ("trusted" if privileged else "user") + ".overlay.opaque", b"y")
    options = "lowerdir=/etc,upperdir=%s,workdir=%s" % (upper, work)
    if not privileged:
        options += ",userxattr"
    mount("overlay", "/etc", "overlay", MS_NOSUID | MS_NODEV, options)
    # The overlay keeps its own reference to the upper layer; the staging mount can go.
    umount(base)
    os.rmdir(base)


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
