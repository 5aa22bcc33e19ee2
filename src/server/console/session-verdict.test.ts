import { describe, expect, it } from "vitest";
import type { Session } from "../../common/api.ts";
import { verdictFor } from "./session-verdict.ts";

const session = (overrides: Partial<Session>): Session => ({
  id: "linux-basics-abcd1234",
  labId: "linux-basics",
  owner: "alice",
  section: null,
  status: "running",
  phase: "Running",
  createdAt: "2026-01-01T10:00:00Z",
  expiresAt: "2026-01-01T11:00:00Z",
  extensions: 0,
  timeline: [],
  message: null,
  notice: null,
  start: "cold",
  ...overrides,
});

describe("verdictFor", () => {
  it("connects to a running VM and waits for a starting one", () => {
    expect(verdictFor(session({}))).toEqual({ kind: "running" });
    expect(verdictFor(session({ status: "starting", phase: "Scheduled" })).kind).toBe("starting");
  });

  it("waits through a guest's own power-off, which the VM restarts", () => {
    expect(verdictFor(session({ status: "stopping", phase: "Succeeded" })).kind).toBe("starting");
  });

  it("ends with a reason when the VM is gone, being stopped, or failed", () => {
    expect(verdictFor(undefined)).toEqual({
      kind: "ended",
      notice: {
        reason: "session_gone",
        params: {},
        message: "This session has ended: its VM no longer exists.",
      },
    });
    expect(verdictFor(session({ status: "stopping", phase: "Running" }))).toEqual({
      kind: "ended",
      notice: {
        reason: "session_stopped",
        params: {},
        message: "This session has ended: its VM was stopped.",
      },
    });
    // A failed session's notice travels with it, so the page says the cause in its own language.
    expect(
      verdictFor(
        session({
          status: "failed",
          phase: "Failed",
          message: "The VM stopped unexpectedly (PodFailed)",
          notice: { reason: "stopped_because", params: { cause: "PodFailed" } },
        }),
      ),
    ).toEqual({
      kind: "ended",
      notice: {
        reason: "session_failed",
        params: { cause: "PodFailed", sessionNotice: "stopped_because" },
        message: "The VM stopped unexpectedly (PodFailed).",
      },
    });
  });
});
