import { describe, expect, it } from "vitest";
import { ConsoleLog } from "./console-log.ts";

describe("a guest's console log", () => {
  it("serves complete lines only, without the serial line's carriage returns", () => {
    const log = new ConsoleLog();
    log.append(Buffer.from("cloud-init: fin"));
    log.append(Buffer.from("ished\r\nlogin: "));
    expect(log.completeLines()).toEqual(["cloud-init: finished"]);
    log.append(Buffer.from("\r\n"));
    expect(log.completeLines()).toEqual(["cloud-init: finished", "login: "]);
  });

  it("drops the oldest lines past its limit, never serving a line cut short", () => {
    const log = new ConsoleLog(12);
    log.append(Buffer.from("first line\n"));
    log.append(Buffer.from("second\nthird\n"));
    expect(log.completeLines()).toEqual(["third"]);
    log.append(Buffer.from("4th\n"));
    expect(log.completeLines()).toEqual(["third", "4th"]);
    log.append(Buffer.from("a line longer than the limit"));
    expect(log.completeLines()).toEqual([]);
    log.append(Buffer.from("\nnext\n"));
    expect(log.completeLines()).toEqual(["next"]);
  });
});
