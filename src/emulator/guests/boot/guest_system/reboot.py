# The service manager's Control+Alt+Delete: the units stop, every process but the consoles' loops
# ends, and the guest boots again as a real guest's second boot does. A part of Manager (manager.py).
import os
import signal
import time

from constants import CLOUD_INIT_VERSION, CONSOLES_MARKER, UNIT_DIR
from unit_files import is_getty, parent_of


class Reboot:
    # -- Control+Alt+Delete ----------------------------------------------------------------------
    # The kernel hands the console's Control+Alt+Delete to PID 1 as SIGINT (systemd turned the
    # kernel's own reboot off with reboot(RB_DISABLE_CAD)); systemd then starts ctrl-alt-del.target,
    # which on Debian is reboot.target: the units stop, every process ends, the kernel restarts the
    # machine, and it boots again from the same disk. The VMI stays (KubeVirt sets no on_reboot, and
    # libvirt's default restarts the domain). Here the machine is the sandbox, so it stays too: the
    # manager stops the units, ends every process but the consoles' loops, and boots again as a real
    # guest's second boot does: cloud-init's per-instance modules (write_files, runcmd) are done
    # already, the enabled units start, then the consoles log in again.

    def ctrl_alt_del(self):
        if self.rebooting:
            return
        self.rebooting = True
        self.booting = True  # systemd shows job results on the console while shutting down too
        self.journal("Activating special unit ctrl-alt-del.target...")
        try:
            os.unlink(CONSOLES_MARKER)
        except OSError:
            pass
        self.tell_host("reboot")
        running = [unit for unit in self.units.values() if unit.main_pid]
        left = [len(running)]

        def stopped(unit):
            self.status(True, "Stopped %s." % unit.config.label)
            left[0] -= 1
            if left[0] == 0:
                self.restart_machine()
        for unit in running:
            self.write_console(("         Stopping %s...%s" % (unit.config.label, self.line_end)).encode())
            self.stop(unit, lambda _ok, unit=unit: stopped(unit))
        if not running:
            self.restart_machine()

    def restart_machine(self):
        self.journal("Reached target reboot.target - System Reboot.")
        self.status(True, "Reached target reboot.target - System Reboot.")
        self.write_console(("reboot: Restarting system" + self.line_end).encode())
        for pid in self.processes_to_end():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.boot_again(time.monotonic() + 5)

    def processes_to_end(self):
        """Every process of the guest but this one, its ancestors (the sandbox's), and the consoles'
        loops, which stand in for the gettys that systemd starts at each boot."""
        spared = {os.getpid()}
        pid = os.getppid()
        while pid > 0 and pid not in spared:
            spared.add(pid)
            pid = parent_of(pid)
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in spared:
                continue
            try:
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if not argv[0]:
                continue  # a kernel thread's or a zombie's
            if argv[1:2] in ([b"/run/lab-guest/console.sh"], [b"/run/lab-guest/tty1.sh"]):
                continue
            yield int(entry)

    def boot_again(self, deadline):
        if any(True for _ in self.processes_to_end()) and time.monotonic() < deadline:
            self.after(0.02, lambda: self.boot_again(deadline))
            return
        up = "Up %.2f seconds." % (time.time() - self.plan["startedAt"] / 1000.0)
        now = time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime())
        for stage in ("init", "modules:config", "modules:final"):
            self.write_console(("Cloud-init v. %s running '%s' at %s. %s%s" % (
                CLOUD_INIT_VERSION, stage, now, up, self.line_end)).encode())
        wanted = []
        for entry in sorted(os.listdir(UNIT_DIR)) if os.path.isdir(UNIT_DIR) else []:
            if entry.endswith(".target.wants") or entry.endswith(".target.requires"):
                for name in sorted(os.listdir(os.path.join(UNIT_DIR, entry))):
                    if name not in wanted and not is_getty(name):
                        wanted.append(name)
        left = [len(wanted)]

        def started(_ok):
            left[0] -= 1
            if left[0] == 0:
                self.booted_again()
        for name in wanted:
            self.start(self.unit(name), started)
        if not wanted:
            self.booted_again()

    def booted_again(self):
        self.write_console(("Cloud-init v. %s finished at %s. Datasource DataSourceNoCloud [seed=/dev/vdb].  Up %.2f seconds%s" % (
            CLOUD_INIT_VERSION, time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime()),
            time.time() - self.plan["startedAt"] / 1000.0, self.line_end)).encode())
        self.booting = False
        self.rebooting = False
        open(CONSOLES_MARKER, "w").close()
        self.tell_host("booted")
