import { describe, expect, it } from "vitest";
import { ownerIdFor, sessionLabels, sessionSelector, sessionsSelector } from "./labels.ts";

describe("labels", () => {
  it("turns a username into the first 16 hex digits of its SHA-256", () => {
    // printf 'ana@example.edu' | sha256sum | cut -c1-16
    expect(ownerIdFor("ana@example.edu")).toBe("3664e9224e3b1eb8");
    expect(ownerIdFor("Ana María")).toMatch(/^[0-9a-f]{16}$/);
  });

  it("labels a session with manager, session, lab and owner id", () => {
    expect(
      sessionLabels({ sessionId: "linux-basics-x7k2m9qa", labId: "linux-basics", owner: "ana@example.edu" }),
    ).toEqual({
      "app.kubernetes.io/managed-by": "lab-console",
      "labconsole.dev/session": "linux-basics-x7k2m9qa",
      "labconsole.dev/lab": "linux-basics",
      "labconsole.dev/owner-id": "3664e9224e3b1eb8",
    });
  });

  it("labels a session with its section when it has one, and refuses what is no section name", () => {
    const labels = (section: string | null) =>
      sessionLabels({ sessionId: "linux-basics-x7k2m9qa", labId: "linux-basics", owner: "ana", section });
    expect(labels("a")["labconsole.dev/section"]).toBe("a");
    expect(labels(null)).not.toHaveProperty(["labconsole.dev/section"]);
    expect(() => labels("a,labconsole.dev/owner-id")).toThrow(/not a section name/);
  });

  it("builds selectors for all sessions, one owner's and one lab's", () => {
    expect(sessionsSelector).toBe("app.kubernetes.io/managed-by=lab-console");
    expect(sessionSelector({ owner: "ana@example.edu", labId: "git-workflow" })).toBe(
      "app.kubernetes.io/managed-by=lab-console,labconsole.dev/owner-id=3664e9224e3b1eb8,labconsole.dev/lab=git-workflow",
    );
  });

  it("refuses a lab id that would change the selector's meaning", () => {
    expect(() => sessionSelector({ labId: "x,labconsole.dev/owner-id!=y" })).toThrow(/not a lab id/);
  });
});
