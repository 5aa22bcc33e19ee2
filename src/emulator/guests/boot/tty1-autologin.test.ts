import { describe, expect, it } from "vitest";
import type { GuestFile } from "./cloud-init.ts";
import { tty1AutologinUser } from "./tty1-autologin.ts";

function file(path: string, lines: string[]): GuestFile {
  return {
    path,
    content: Buffer.from(lines.join("\n")),
    mode: 0o644,
    append: false,
    owner: "root:root",
    defer: false,
  };
}

const labConsoles = [
  "[Unit]",
  "After=lab-agent.service",
  "[Service]",
  "ExecStart=",
  "ExecStart=-/sbin/agetty -o '-p -f -- \\\\u' --autologin student --noclear - $TERM",
];

describe("tty1AutologinUser", () => {
  it("reads the user from a getty@tty1 drop-in as Lab Console writes it for graphical labs", () => {
    const path = "/etc/systemd/system/getty@tty1.service.d/autologin.conf";
    expect(tty1AutologinUser([file(path, labConsoles)])).toBe("student");
    expect(tty1AutologinUser([file("/etc/systemd/system/getty@.service.d/a.conf", labConsoles)])).toBe(
      "student",
    );
  });

  it("leaves tty1 at its prompt for the serial getty's drop-in, another tty, or a reset ExecStart", () => {
    const serial = "/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf";
    expect(tty1AutologinUser([file(serial, labConsoles)])).toBeUndefined();
    expect(
      tty1AutologinUser([file("/etc/systemd/system/getty@tty2.service.d/a.conf", labConsoles)]),
    ).toBeUndefined();
    const path = "/etc/systemd/system/getty@tty1.service.d/autologin.conf";
    expect(tty1AutologinUser([file(path, [...labConsoles, "ExecStart="])])).toBeUndefined();
    expect(
      tty1AutologinUser([file(path, ["[Service]", "ExecStart=-/sbin/agetty --noclear - $TERM"])]),
    ).toBeUndefined();
  });

  it("takes -o login options without -f for no autologin: login then asks for the password", () => {
    const path = "/etc/systemd/system/getty@tty1.service.d/autologin.conf";
    const withoutF = "ExecStart=-/sbin/agetty -o '-p -- \\\\u' --autologin student --noclear - $TERM";
    expect(tty1AutologinUser([file(path, ["[Service]", "ExecStart=", withoutF])])).toBeUndefined();
    const plain = "ExecStart=-/sbin/agetty --autologin student --noclear - $TERM";
    expect(tty1AutologinUser([file(path, ["[Service]", "ExecStart=", plain])])).toBe("student");
  });
});
