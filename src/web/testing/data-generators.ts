// Test data for the SPA's component tests, in the shapes of src/common's schemas, with overrides.
import type { Me, Session } from "../../common/api.ts";

export function aSession(overrides: Partial<Session> = {}): Session {
  return {
    id: "s-1",
    labId: "linux-basics",
    owner: "alice",
    section: null,
    status: "running",
    phase: "Running",
    createdAt: "2026-01-01T09:00:00.000Z",
    expiresAt: "2026-01-01T11:00:00.000Z",
    extensions: 0,
    timeline: [],
    message: null,
    notice: null,
    start: "cold",
    ...overrides,
  };
}

export function aUser(overrides: Partial<Me> = {}): Me {
  return { username: "alice", role: "student", sections: [], ...overrides };
}
