// A sandboxed guest's tty1, the console its VGA screen shows. At boot getty's login prompt
// (tty1-login.ts), as on every Lab Console VM; when the user data gives the student autologin there
// (tty1-autologin.ts; graphical labs), cloud-init's getty restart at the end of the boot starts the
// student's login shell on a pty of its own in the sandbox, the way the serial line's autologin shell
// is started (boot-files.ts), and from then on the screen is that terminal (linux-vt.ts). Keys from
// the screen's viewers go to whichever runs, as the console's keyboard driver sends them
// (linux-keyboard.ts); Control+Alt+Delete goes to init, whatever runs.
import type { Duplex } from "node:stream";
import { LinuxKeyboard } from "./linux-keyboard.ts";
import { LinuxVt } from "./linux-vt.ts";
import { TextScreen } from "./text-screen.ts";
import { Tty1Login } from "./tty1-login.ts";

export interface Tty1Options {
  hostname: string;
  /** The autologin user, when the user data asks for one on tty1. */
  autologin?: string;
  /** The pty of the student's shell on tty1 (its input and output), when autologin is on. */
  shell?: Duplex;
  /** Control+Alt+Delete was pressed: the kernel tells init (ctrl_alt_del() in kernel/reboot.c). */
  ctrlAltDel(): void;
}

export class Tty1 {
  private readonly keyboard = new LinuxKeyboard();
  private readonly listeners = new Set<() => void>();
  private screen: TextScreen | undefined;
  private login: Tty1Login | undefined;
  private vt: LinuxVt | undefined;

  constructor(private readonly options: Tty1Options) {
    options.shell?.on("data", (chunk: Buffer) => {
      this.startShell();
      this.vt?.write(chunk);
    });
    // The guest's end of it goes with the guest; nothing to tell anyone.
    options.shell?.on("error", () => undefined);
  }

  /** cloud-init has finished: its getty restart logs the student in, when autologin is on. */
  booted(): void {
    this.startShell();
  }

  /**
   * The guest reboots: the machine's reset clears the VGA screen (the BIOS sets the text mode anew),
   * and the next boot's getty starts afresh: with autologin it logs the student in again, on a new
   * terminal, without a prompt before (the drop-in is on the disk from the start now).
   */
  reboot(): void {
    this.vt?.dispose();
    this.vt = undefined;
    this.login?.close();
    this.login = undefined;
    if (this.screen) {
      this.screen.clear();
      this.screen.setCursor(undefined);
      if (!this.options.autologin) this.login = this.loginOn(this.screen);
    }
    this.changed();
  }

  /** The screen, drawn from now on; made with the font on first use (nobody may ever look). */
  screenWith(glyphs: Uint8Array): TextScreen {
    if (this.screen) return this.screen;
    this.screen = new TextScreen(glyphs);
    if (this.vt) this.vt.showOn(this.screen);
    else this.login = this.loginOn(this.screen);
    return this.screen;
  }

  private loginOn(screen: TextScreen): Tty1Login {
    return new Tty1Login(screen, this.options.hostname, () => this.changed());
  }

  /** Called after anything on the screen changed. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An RFB key event: an X11 keysym pressed or released. */
  key(keysym: number, down: boolean): void {
    const outcome = this.keyboard.event(keysym, down, this.vt?.applicationCursorKeys);
    if (!outcome) return;
    if ("ctrlAltDel" in outcome) return this.options.ctrlAltDel();
    if (this.vt) this.options.shell?.write(outcome.bytes);
    else for (const character of outcome.bytes) this.login?.key(character);
  }

  close(): void {
    this.login?.close();
    this.vt?.dispose();
    this.listeners.clear();
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  // getty@tty1 (re)started with --autologin: systemd clears the VT first (Debian's getty@.service
  // has TTYVTDisallocate=yes, so --noclear keeps nothing), then agetty prints a newline, /etc/issue
  // and the automatic login, and the shell takes over.
  private startShell(): void {
    const { autologin, shell, hostname } = this.options;
    if (this.vt || !autologin || !shell) return;
    this.login?.close();
    this.login = undefined;
    this.vt = new LinuxVt(() => this.changed());
    this.vt.write(
      `\r\nDebian GNU/Linux 12 ${hostname} tty1\r\n\r\n${hostname} login: ${autologin} (automatic login)\r\n\r\n`,
    );
    if (this.screen) this.vt.showOn(this.screen);
  }
}
