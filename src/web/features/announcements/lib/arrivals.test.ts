import { describe, expect, it } from "vitest";
import type { Announcement } from "../../../../common/announcements-api.ts";
import { newestArrival } from "./arrivals.ts";

const anAnnouncement = (id: string): Announcement => ({
  id,
  labId: "linux-basics",
  section: null,
  classId: null,
  author: "tara",
  text: `announcement ${id}`,
  createdAt: "2030-03-02T09:00:00.000Z",
});

describe("the announcement to tell of", () => {
  it("is none in the first list a page gets", () => {
    expect(newestArrival(null, [anAnnouncement("a")])).toBeUndefined();
  });

  it("is the newest one not seen before, and none when nothing is new", () => {
    const known = new Set(["a"]);
    expect(newestArrival(known, [anAnnouncement("c"), anAnnouncement("b"), anAnnouncement("a")])?.id).toBe(
      "c",
    );
    expect(newestArrival(known, [anAnnouncement("a")])).toBeUndefined();
    expect(newestArrival(known, [])).toBeUndefined();
  });
});
