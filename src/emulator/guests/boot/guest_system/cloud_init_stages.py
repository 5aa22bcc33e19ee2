# cloud-init's stages, run as guest root by the boot process (bootcmd, write_files, packages,
# write_files with defer, runcmd, in the order of cloud-init's cloud.cfg), with cloud-init's own
# warnings; and the boot itself: it starts the service manager in a process of its own, runs the
# stages with their output through the manager, and tells the manager when cloud-init has finished.
import grp
import os
import pwd
import socket
import subprocess
import sys
import time

from constants import CLOUD_INIT_VERSION, CONTROL_SOCKET, SERVICE_PATH, STATUS_FD, read_json
from manager import Manager


def timestamp_for_log():
    now = time.time()
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now)) + ",%03d" % int((now % 1) * 1000)


def warn(source, message):
    # How cloud-init's console handler prints a WARNING (its log format).
    print("%s - %s[WARNING]: %s" % (timestamp_for_log(), source, message), flush=True)


def module_failed(module):
    warn("util.py", "Running module %s (<module 'cloudinit.config.cc_%s'>) failed" % (module, module))


class Boot:
    def __init__(self, plan):
        self.plan = plan
        self.started = plan["startedAt"] / 1000.0
        # The delays count from here: the emulator reports the VMI Running as this process starts.
        self.delay_base = time.time()

    def uptime(self):
        return "%.2f" % (time.time() - self.started)

    def stage(self, name):
        print(
            "Cloud-init v. %s running '%s' at %s. Up %s seconds."
            % (CLOUD_INIT_VERSION, name, time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime()), self.uptime()),
            flush=True,
        )

    def wait_until(self, ms_after_start):
        delay = self.delay_base + ms_after_start / 1000.0 - time.time()
        if delay > 0:
            time.sleep(delay)

    def run(self):
        plan = self.plan
        self.wait_until(plan["initDelayMs"])
        self.stage("init")
        for line in plan["log"]:
            print(line, flush=True)
        if plan["bootcmd"]:
            self.script("bootcmd", ["/bin/sh", plan["bootcmd"]])
        self.write_files([f for f in plan["writeFiles"] if not f["defer"]])
        self.stage("modules:config")
        if plan["runcmd"]:
            os.makedirs("/var/lib/cloud/instance/scripts", 0o755, exist_ok=True)
            runcmd = "/var/lib/cloud/instance/scripts/runcmd"
            with open(plan["runcmd"], "rb") as src, open(runcmd, "wb") as dst:
                dst.write(src.read())
            os.chmod(runcmd, 0o700)
        self.wait_until(plan["runcmdDelayMs"])
        self.stage("modules:final")
        self.packages()
        self.write_files([f for f in plan["writeFiles"] if f["defer"]], module="write_files_deferred")
        if plan["runcmd"]:
            self.script("scripts_user", ["/var/lib/cloud/instance/scripts/runcmd"])
        print(
            "Cloud-init v. %s finished at %s. Datasource DataSourceNoCloud [seed=/dev/vdb].  Up %s seconds"
            % (CLOUD_INIT_VERSION, time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime()), self.uptime()),
            flush=True,
        )
        print("cloud-init: finished", flush=True)

    def script(self, module, argv):
        # As cloud-final.service runs it: root, working directory /, systemd's default PATH and no HOME.
        try:
            code = subprocess.call(
                argv, stdin=subprocess.DEVNULL, cwd="/", env={"PATH": SERVICE_PATH, "LANG": "C.UTF-8"}
            )
        except OSError as error:
            code = None
            warn("util.py", "Failed running %s: %s" % (argv[-1], error))
        if code != 0:
            if code is not None:
                warn("util.py", "Failed running %s [%s]" % (argv[-1], code))
            if module == "scripts_user":
                warn("cc_scripts_user.py", "Failed to run module scripts_user (scripts in /var/lib/cloud/instance/scripts)")
            module_failed(module)

    def write_files(self, files, module="write_files"):
        # cc_write_files: parents made as needed, the file written, then chmod and chown (default
        # root:root); the first failure fails the module and the files after it are not written.
        for entry in files:
            try:
                write_file(entry, self.plan["privileged"])
            except (OSError, KeyError) as error:
                warn("util.py", "Failed writing %s: %s" % (entry["path"], describe(error)))
                module_failed(module)
                return

    def packages(self):
        plan = self.plan
        names = plan["packages"]
        update, upgrade = plan["packageUpdate"], plan["packageUpgrade"]
        if not (names or update or upgrade):
            return
        repo = plan["image"].get("repository")
        errors = 0
        if update or upgrade:
            warn("util.py", "Package update failed")
            errors += 1
        if upgrade:
            warn("util.py", "Package upgrade failed")
            errors += 1
        if names:
            warn("util.py", "Failure when attempting to install packages: %r" % (names,))
            errors += 1
        warn("cc_package_update_upgrade_install.py", "%d failed with exceptions, re-raising the last one" % errors)
        module_failed("package_update_upgrade_install")
        manager = plan["image"]["packageManager"]
        where = (" (%s)" % repo["url"]) if repo else ""
        print(
            "cloud-init: packages: %s could not reach its repositories%s: this guest has no network, so nothing was installed"
            % (manager if manager != "none" else "the package manager", where),
            flush=True,
        )


def describe(error):
    if isinstance(error, KeyError):
        return "unknown user or group %s" % error.args[0]
    return str(error)


def write_file(entry, privileged):
    path = entry["path"]
    os.makedirs(os.path.dirname(path), 0o755, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_APPEND if entry["append"] else os.O_TRUNC)
    with open(entry["source"], "rb") as src:
        content = src.read()
    fd = os.open(path, flags, entry["mode"])
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.chmod(path, entry["mode"])
    if privileged:
        user, _, group = entry["owner"].partition(":")
        uid = pwd.getpwnam(user).pw_uid if user else -1
        gid = grp.getgrnam(group).gr_gid if group else -1
        os.chown(path, uid, gid)


def status_pipe():
    """The host's status pipe, kept from every program this process starts; None when it has none."""
    try:
        os.set_inheritable(STATUS_FD, False)
    except OSError:
        return None
    return STATUS_FD


def boot(plan_path):
    plan = read_json(plan_path)
    os.umask(0o022)
    status_fd = status_pipe()
    output_r, output_w = os.pipe()
    ready_r, ready_w = os.pipe()
    if os.fork() == 0:
        try:
            os.close(output_w)
            os.close(ready_r)
            os.setsid()
            Manager(plan, output_r, ready_w, status_fd).serve()
        except BaseException as error:  # the manager's end; the boot process reports it
            sys.stderr.write("lab-guest: service manager: %r\n" % (error,))
        finally:
            os._exit(1)
    os.close(output_r)
    os.close(ready_w)
    if status_fd is not None:
        os.close(status_fd)
    if os.read(ready_r, 1) != b"1":
        sys.stderr.write("lab-guest: the service manager did not start\n")
        return 1
    os.close(ready_r)
    # cloud-init's own output and its scripts' go through the manager, which copies them to the
    # console and to /var/log/cloud-init-output.log for as long as anything writes (a daemon runcmd
    # left behind may keep writing after cloud-init is done, as into cloud-init's tee on a real guest).
    os.dup2(output_w, 1)
    os.dup2(output_w, 2)
    os.close(output_w)
    try:
        Boot(plan).run()
    finally:
        sys.stdout.flush()
        request("boot-finished", [])
    return 0


# The boot process's own request (guest-commands.py holds the guest's systemctl and journalctl).
def request(tool, args):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(CONTROL_SOCKET)
    client.sendall(b"\0".join(arg.encode() for arg in [tool] + args))
    client.shutdown(socket.SHUT_WR)
    while client.recv(65536):
        pass
    client.close()
