import { describe, expect, it, vi } from "vitest";
import { patiently } from "../../common/testing/patience.ts";
import { ConsoleLog } from "./console-log.ts";

describe("a guest's console log", () => {
  it("serves complete lines only, each without the CR the container runtime drops", () => {
    const log = new ConsoleLog({ lagMs: 0 });
    log.append(Buffer.from("cloud-init: fin"));
    log.append(Buffer.from("ished\r\nlogin: "));
    expect(log.completeLines()).toEqual(["cloud-init: finished"]);
    log.append(Buffer.from("\r\n"));
    expect(log.completeLines()).toEqual(["cloud-init: finished", "login: "]);
    // containerd drops one CR before the LF, not every one.
    log.append(Buffer.from("progress 50%\rprogress 100%\r\r\n"));
    expect(log.completeLines().at(-1)).toBe("progress 50%\rprogress 100%\r");
  });

  it("has the guest's output a moment after the guest printed it, in order", async () => {
    const log = new ConsoleLog({ lagMs: 30 });
    log.append(Buffer.from("first\r\n"));
    log.append(Buffer.from("second\r\n"));
    expect(log.completeLines()).toEqual([]);
    await vi.waitFor(() => expect(log.completeLines()).toEqual(["first", "second"]), patiently(10_000, 5));
  });

  it("drops the oldest lines past its limit, never serving a line cut short", () => {
    const log = new ConsoleLog({ limitBytes: 12, lagMs: 0 });
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
