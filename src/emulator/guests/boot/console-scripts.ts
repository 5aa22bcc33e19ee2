// The consoles' loops, run as the guest user from the init script (boot-files.ts): the serial line's
// and, when the user data gives autologin there, tty1's. Each stands in for a getty: a login shell on
// a terminal of its own, started again when it ends and after a reboot. `bin` is where the host's
// plumbing commands are mounted in the guest (boot-files.ts PLUMBING_DIR).
import { shellQuote } from "../shell-quote.ts";

// A reboot kills script(1), and sh would report it on the console ("Killed"), which no getty does.
const quietLoop = "exec 2>/dev/null";

/** guest_system/constants.py's CONSOLES_MARKER: the boot is over. */
const untilBooted = (bin: string) => `until [ -e /run/systemd/consoles-up ]; do ${bin}/sleep 0.05; done`;

// Like a getty on a serial port: a fresh shell whenever the last one ends, on the same terminal. The
// loop runs inside one script(1), so the terminal outlives every shell as a real ttyS0 outlives its
// getty's logins: it is the sandbox's first pty, /dev/pts/0, which its /dev/ttyS0 names (sandbox.ts),
// so the agent's TIOCSWINSZ on /dev/ttyS0 reaches the shell and whatever runs in it. script(1) gives
// the shell a terminal (job control, Ctrl-C, stty) while the emulator holds plain pipes, as a serial
// line would. The outer loop starts it again after a reboot (guest_system/reboot.py's ctrl_alt_del ends every
// process but this loop), once the service manager says the boot is over, as systemd starts the
// gettys after the units they are ordered after; it also matters if someone kills the inner one.
// Each shell starts in the home, as login(1) puts it there: the sandbox's working directory is the
// home's mount point from before the guest's disk was mounted over it, an empty read-only directory.
export function consoleScript(shell: string, bin: string): string {
  const inner = `${bin}/stty rows 24 cols 80; while :; do cd || cd /; ${shell} -l; ${bin}/sleep 0.2; done`;
  return `${quietLoop}
while :; do
  ${untilBooted(bin)}
  ${bin}/script -qec ${shellQuote(inner)} /dev/null
  ${bin}/sleep 0.2
done
`;
}

// tty1 with autologin, as the serial line's console (consoleScript), on the sandbox's second pty:
// the loop waits until the serial console has taken the first, which /dev/ttyS0 names, and tty1 gets
// /dev/pts/1, which /dev/tty1 names (sandbox.ts). What getty@tty1 gives a shell: TERM=linux (systemd
// sets it for a virtual console) and the VT's 80x25 cells.
export function tty1Script(shell: string, bin: string): string {
  const inner = `${bin}/stty rows 25 cols 80; while :; do cd || cd /; ${shell} -l; ${bin}/sleep 0.2; done`;
  return `${quietLoop}
export TERM=linux
while :; do
  ${untilBooted(bin)}
  while [ ! -e /dev/pts/0 ]; do ${bin}/sleep 0.05; done
  ${bin}/script -qec ${shellQuote(inner)} /dev/null
  ${bin}/sleep 0.2
done
`;
}
