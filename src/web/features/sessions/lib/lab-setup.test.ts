import { describe, expect, it } from "vitest";
import type { BootLog, Session } from "../../../../common/api.ts";
import { labSetup, setupFollowedForMs } from "./lab-setup.ts";

const runningAt = Date.parse("2026-12-07T10:00:20Z");

function session(status: Session["status"]): Session {
  return {
    id: "s1",
    labId: "linux-basics",
    owner: "alice",
    section: null,
    status,
    phase: status === "running" ? "Running" : "Scheduled",
    createdAt: "2026-12-07T10:00:00Z",
    expiresAt: "2026-12-07T12:00:00Z",
    extensions: 0,
    timeline: status === "running" ? [{ phase: "Running", at: new Date(runningAt).toISOString() }] : [],
    message: null,
    notice: null,
    start: "cold",
  };
}

const log = (...lines: string[]): BootLog => ({ lines, logging: "on" });

describe("a lab's set-up, from its boot log", () => {
  it("is waiting before the VM runs, and running once it runs until cloud-init says it finished", () => {
    expect(labSetup(session("starting"), undefined, runningAt)).toEqual({ state: "waiting" });
    const booting = log(
      "Cloud-init v. 24.1 running 'modules:final' at Mon, 07 Dec 2026 10:00:40 +0000. Up 20.10 seconds.",
    );
    expect(labSetup(session("running"), booting, runningAt + 30_000)).toEqual({
      state: "running",
      since: "2026-12-07T10:00:20.000Z",
    });
  });

  it("finishes at the time of cloud-init's final message, as the emulator and a real console print it", () => {
    const emulated = log(
      "Cloud-init v. 24.1 finished at Mon, 07 Dec 2026 10:01:10 +0000. Datasource DataSourceNoCloud [seed=/dev/vdb].  Up 50.12 seconds",
      "cloud-init: finished",
    );
    expect(labSetup(session("running"), emulated, runningAt + 60_000)).toEqual({
      state: "finished",
      at: "2026-12-07T10:01:10.000Z",
    });
    // systemd's console prefix, and a version string of a distribution's package.
    const real = log(
      "[   70.412345] cloud-init[602]: Cloud-init v. 24.1.3-0ubuntu3 finished at Mon, 07 Dec 2026 10:01:12 +0000. Datasource DataSourceNoCloud [seed=/dev/vdb].  Up 69.98 seconds",
    );
    expect(labSetup(session("running"), real, runningAt + 60_000)).toEqual({
      state: "finished",
      at: "2026-12-07T10:01:12.000Z",
    });
  });

  it("is over on a warm VM, set up before the class", () => {
    expect(labSetup({ ...session("running"), start: "warm" }, undefined, runningAt)).toEqual({
      state: "finished",
    });
  });

  it("cannot tell without a boot log, nor long after Running with no final message", () => {
    expect(labSetup(session("running"), { lines: [], logging: "off" }, runningAt)).toEqual({
      state: "unknown",
    });
    expect(labSetup(session("running"), undefined, runningAt)).toEqual({ state: "unknown" });
    expect(labSetup(session("running"), log("login:"), runningAt + setupFollowedForMs)).toEqual({
      state: "unknown",
    });
  });
});
