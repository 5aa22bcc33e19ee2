// Whether the user data gives a user autologin on tty1: a drop-in for getty@tty1.service (or for
// every getty@, or autovt@tty1, which logind starts on tty1 where no getty@tty1 is enabled) whose
// last ExecStart= runs agetty with --autologin, as Lab Console writes for graphical labs
// (server/sessions/vm-manifest.ts). The sandboxed guest's systemd only stands in for the gettys
// (guest_system/), so the emulator reads the drop-in from the user data, where cloud-init's
// write_files puts it; its getty restart at the end of runcmd is when the shell starts.
import type { GuestFile } from "./cloud-init.ts";

const dropIn = /^\/etc\/systemd\/system\/(getty@tty1|getty@|autovt@tty1|autovt@)\.service\.d\/[^/]+\.conf$/;

/** The user agetty logs in by itself on tty1, or undefined for its login prompt. */
export function tty1AutologinUser(files: readonly GuestFile[]): string | undefined {
  let user: string | undefined;
  for (const file of files) {
    if (!dropIn.test(file.path)) continue;
    for (const line of file.content.toString("utf8").split("\n")) {
      const value = /^\s*ExecStart\s*=(.*)$/.exec(line)?.[1]?.trim();
      if (value === undefined) continue;
      // An empty ExecStart= resets the command; systemd runs the last one.
      const argv = words(value.replace(/^[-@:+!]+/, ""));
      if (value === "" || !argv[0]?.endsWith("agetty")) {
        user = undefined;
        continue;
      }
      user = autologinOf(argv);
    }
  }
  return user;
}

/**
 * agetty's --autologin user. With -o (--login-options) the options replace the login command line
 * agetty would compose, -f included, so unless they bring -f themselves login asks for the (locked)
 * password: no shell then, as on a real guest, where tty1 stays at login's prompt.
 */
function autologinOf(argv: string[]): string | undefined {
  let user: string | undefined;
  let loginOptions: string | undefined;
  for (const [index, arg] of argv.entries()) {
    if (arg === "--autologin" || arg === "-a") user = argv[index + 1];
    else if (arg.startsWith("--autologin=")) user = arg.slice("--autologin=".length);
    else if (arg === "-o" || arg === "--login-options") loginOptions = argv[index + 1];
    else if (arg.startsWith("--login-options=")) loginOptions = arg.slice("--login-options=".length);
  }
  if (loginOptions !== undefined && !loginOptions.split(/\s+/).includes("-f")) return undefined;
  return user;
}

/** A command line split as systemd does it: by blanks, with '' and "" quoting (escapes kept as written). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map(
    (match) => match[1] ?? match[2] ?? match[3] ?? "",
  );
}
