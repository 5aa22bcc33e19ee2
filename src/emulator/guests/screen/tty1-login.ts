// What a Lab Console VM's VGA screen shows at boot, and for good in labs without a graphical console:
// getty on tty1 at its login prompt. Their user data gives the student autologin on the serial console
// only (docs/vnc.md), and the student's password is locked, so a name typed here is asked for a
// password that no answer satisfies, as on a real guest.
import type { TextScreen } from "./text-screen.ts";

/** login(1)'s pause after a wrong password (FAIL_DELAY in Debian's login.defs). */
const failDelayMs = 3000;

export class Tty1Login {
  private state: "name" | "password" | "waiting" = "name";
  private name = "";
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly screen: TextScreen,
    private readonly hostname: string,
    /** Called after anything was drawn. */
    private readonly changed: () => void,
    private readonly delayMs = failDelayMs,
  ) {
    screen.clear();
    screen.write(`\nDebian GNU/Linux 12 ${hostname} tty1\n\n`);
    this.prompt();
  }

  /** A key as a character: printable ones, "\r" for Return, DEL (or "\b") for BackSpace. */
  key(character: string): void {
    if (this.state === "waiting") return;
    if (character === "\r") this.enter();
    else if (character === "\x7f" || character === "\b") {
      if (this.state === "name" && this.name !== "") {
        this.name = this.name.slice(0, -1);
        this.screen.erase();
      }
    } else if (character >= " " && character <= "~") {
      // The password is read without echo.
      if (this.state === "name") {
        this.name += character;
        this.screen.write(character);
      }
    } else return;
    this.changed();
  }

  close(): void {
    clearTimeout(this.timer);
  }

  private prompt(): void {
    this.state = "name";
    this.name = "";
    this.screen.write(`${this.hostname} login: `);
  }

  private enter(): void {
    if (this.state === "name") {
      this.screen.write("\n");
      if (this.name === "") this.prompt();
      else {
        this.state = "password";
        this.screen.write("Password: ");
      }
      return;
    }
    this.state = "waiting";
    this.screen.write("\n");
    this.timer = setTimeout(() => {
      this.screen.write("\nLogin incorrect\n");
      this.prompt();
      this.changed();
    }, this.delayMs);
  }
}
