import { describe, expect, it } from "vitest";
import { liveBytesAlreadyLogged, logAsTerminalOutput } from "./log-seam.ts";

const bytes = (text: string) => Buffer.from(text, "utf8");
/** What the live output looks like after the part the log already had. */
const liveAfterLog = (log: string, live: string) =>
  bytes(live)
    .subarray(liveBytesAlreadyLogged(bytes(log), bytes(live)))
    .toString("utf8");

describe("the serial console log as a terminal prints it", () => {
  it("gives each line back the CR the container runtime dropped, and leaves out a line cut short", () => {
    expect(logAsTerminalOutput(bytes("one\ntwo\r\nthree cut sh")).toString()).toBe("one\r\ntwo\r\r\n");
    expect(logAsTerminalOutput(bytes("")).length).toBe(0);
  });
});

describe("where the log meets the live output", () => {
  it("keeps all live output when the log has none of it", () => {
    expect(liveAfterLog("boot\nlogin ok\n", "$ ls\r\nfile\r\n")).toBe("$ ls\r\nfile\r\n");
    expect(liveAfterLog("", "anything\r\n")).toBe("anything\r\n");
  });

  it("drops the live lines the log already holds, in the log's form (no CR before LF)", () => {
    expect(liveAfterLog("a\nb\nc\n", "b\r\nc\r\nd\r\n$ ")).toBe("d\r\n$ ");
  });

  it("takes the first live line as the end of a log line begun before the line opened", () => {
    // The prompt was printed before the line to the VM opened; the command's output after.
    expect(liveAfterLog("old\n$ done\nnext\n", "done\r\nnext\r\nlater")).toBe("later");
  });

  it("counts complete live lines only: the log has no partial ones", () => {
    expect(liveAfterLog("a\nb\n", "b")).toBe("b");
    expect(liveAfterLog("a\nb\n", "b\r\nb")).toBe("b");
  });

  it("prefers the longest overlap, so lines the log caught up with are not shown twice", () => {
    expect(liveAfterLog("x\ntick\ntick\ntick\n", "tick\r\ntick\r\ntick\r\n")).toBe("");
    expect(liveAfterLog("x\ntick\n", "tick\r\ntick\r\n")).toBe("tick\r\n");
  });

  it("does not take a live line for a log line it only resembles", () => {
    expect(liveAfterLog("seam-11\n", "seam-12\r\n")).toBe("seam-12\r\n");
    expect(liveAfterLog("ab\ncd\n", "b\r\ncx\r\n")).toBe("b\r\ncx\r\n");
  });

  it("compares bytes, so multi-byte characters and escape sequences match as printed", () => {
    const coloured = "\x1b[1;34mディレクトリ\x1b[0m";
    expect(liveAfterLog(`${coloured}\n目录\n`, `目录\r\n次\r\n`)).toBe("次\r\n");
  });
});
