import { describe, expect, it } from "vitest";
import { TextScreen } from "./text-screen.ts";
import { Tty1Login } from "./tty1-login.ts";
import { loadVgaFont } from "./vga-font.ts";

function login() {
  const font = loadVgaFont();
  if ("problem" in font) throw new Error(font.problem);
  const screen = new TextScreen(font.glyphs);
  let changes = 0;
  const tty = new Tty1Login(screen, "lab-1", () => (changes += 1), 0);
  const rows = () => [...Array(8).keys()].map((row) => screen.rowText(row));
  return { screen, tty, rows, changes: () => changes };
}

describe("tty1 at its login prompt", () => {
  it("echoes a login name, erases with BackSpace, and asks for a password it never accepts", async () => {
    const { tty, rows, changes } = login();
    expect(rows().slice(0, 4)).toEqual(["", "Debian GNU/Linux 12 lab-1 tty1", "", "lab-1 login:"]);
    for (const key of "studentx\b") tty.key(key);
    expect(rows()[3]).toBe("lab-1 login: student");
    tty.key("\r");
    for (const key of "secret") tty.key(key);
    expect(rows()[4]).toBe("Password:"); // not echoed
    tty.key("\r");
    await expect.poll(() => rows().slice(5, 8)).toEqual(["", "Login incorrect", "lab-1 login:"]);
    expect(changes()).toBeGreaterThan(10);
    tty.close();
  });

  it("asks again on an empty name, and scrolls at the bottom of the screen", () => {
    const { tty, rows, screen } = login();
    for (let i = 0; i < 30; i += 1) tty.key("\r");
    expect(screen.rowText(24)).toBe("lab-1 login:");
    expect(rows()[0]).toBe("lab-1 login:");
    expect(screen.takeDirty()).toEqual({ x: 0, y: 0, width: 720, height: 400 });
    expect(screen.takeDirty()).toBeUndefined();
    tty.close();
  });
});
