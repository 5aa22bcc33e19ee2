import { describe, expect, it } from "vitest";
import type { Me } from "../../common/api.ts";
import { staffSections } from "../access/sections.ts";
import { lookBackMs, mayAnnounceTo, shownSince } from "./audience.ts";

const person = (role: Me["role"], sections: string[] = []): Me => ({ username: "someone", role, sections });

describe("who may announce to whom", () => {
  it("lets instructors, whatever they list, and TAs of the whole course address the lab or any section", () => {
    for (const user of [person("instructor"), person("instructor", ["mon-am"]), person("ta")]) {
      expect(staffSections(user)).toBe("any");
      expect(mayAnnounceTo(user, null)).toBe(true);
      expect(mayAnnounceTo(user, "tue-pm")).toBe(true);
    }
  });

  it("keeps a TA with sections to their own sections, never the whole lab", () => {
    const ta = person("ta", ["mon-am", "wed-am"]);
    expect(staffSections(ta)).toEqual(["mon-am", "wed-am"]);
    expect(mayAnnounceTo(ta, "wed-am")).toBe(true);
    expect(mayAnnounceTo(ta, "tue-pm")).toBe(false);
    expect(mayAnnounceTo(ta, null)).toBe(false);
  });
});

describe("how far back a session looks", () => {
  const now = Date.UTC(2030, 2, 2, 12);

  it("keeps everything sent since the session started, however long ago that was", () => {
    const startedYesterday = now - 2 * lookBackMs;
    expect(shownSince(startedYesterday, now)).toBe(startedYesterday);
  });

  it("gives a session started just now the last 12 hours", () => {
    expect(lookBackMs).toBe(12 * 3_600_000);
    expect(shownSince(now - 60_000, now)).toBe(now - lookBackMs);
  });
});
