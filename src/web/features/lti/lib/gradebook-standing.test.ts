import { describe, expect, it } from "vitest";
import { buildScore } from "../testing/lti-data.ts";
import { gradebookStandings } from "./gradebook-standing.ts";

const at = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, "0")}:00.000Z`;

describe("where a score stands in the gradebook", () => {
  it("puts the newest posted score in the gradebook and an older refused one behind it", () => {
    const refused = buildScore({ id: "old", state: "refused", gradedAt: at(1), postedAt: null });
    const posted = buildScore({ id: "new", state: "posted", gradedAt: at(2), postedAt: at(3) });
    expect(gradebookStandings([posted, refused])).toEqual(
      new Map([
        ["new", "in-gradebook"],
        ["old", "replaced"],
      ]),
    );
  });

  it("keeps an older posted score in the gradebook while the newer one is refused or on its way", () => {
    const posted = buildScore({ id: "posted", state: "posted", gradedAt: at(1), postedAt: at(1) });
    const refused = buildScore({ id: "refused", state: "refused", gradedAt: at(2), postedAt: null });
    const pending = buildScore({ id: "pending", state: "pending", gradedAt: at(3), postedAt: null });
    expect(gradebookStandings([pending, refused, posted])).toEqual(
      new Map([
        ["posted", "in-gradebook"],
        ["refused", "replaced"],
      ]),
    );
  });

  it("compares only the scores of one student, lab and course", () => {
    const scores = [
      buildScore({ id: "alice", student: "alice@example.edu", gradedAt: at(1) }),
      buildScore({ id: "bob", student: "bob@example.edu", gradedAt: at(2) }),
      buildScore({ id: "other-lab", labId: "git-workflow", gradedAt: at(3) }),
      buildScore({ id: "other-course", courseId: "course-2", gradedAt: at(4) }),
    ];
    expect(gradebookStandings(scores)).toEqual(new Map());
  });

  it("of scores graded at the same time, keeps the one posted last", () => {
    const first = buildScore({ id: "first", gradedAt: at(1), postedAt: at(2) });
    const again = buildScore({ id: "again", gradedAt: at(1), postedAt: at(5) });
    expect(gradebookStandings([first, again])).toEqual(new Map([["again", "in-gradebook"]]));
  });

  it("replaces older refused scores by a newer refused one, with none in the gradebook", () => {
    const older = buildScore({ id: "older", state: "refused", gradedAt: at(1), postedAt: null });
    const newer = buildScore({ id: "newer", state: "refused", gradedAt: at(2), postedAt: null });
    expect(gradebookStandings([newer, older])).toEqual(new Map([["older", "replaced"]]));
  });
});
