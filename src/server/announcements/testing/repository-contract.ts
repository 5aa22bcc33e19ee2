// What every AnnouncementRepository must do, as a suite any backend runs with its own harness.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RepositoryHarness } from "../../db/testing/repository-harness.ts";
import type { AnnouncementRecord, AnnouncementRepository, StudentView } from "../repository.ts";

const minute = 60_000;
const nine = Date.UTC(2030, 2, 2, 9, 0, 0, 123);

export function anAnnouncement(overrides: Partial<AnnouncementRecord> = {}): AnnouncementRecord {
  return {
    id: "a1",
    labId: "linux-basics",
    section: null,
    classId: "c1",
    author: "tara",
    text: "The proxy is down: wait five minutes.",
    createdAt: nine,
    ...overrides,
  };
}

const aliceView = (overrides: Partial<StudentView> = {}): StudentView => ({
  labId: "linux-basics",
  section: "mon-am",
  since: nine - 60 * minute,
  username: "alice",
  limit: 20,
  ...overrides,
});

const ids = (records: AnnouncementRecord[]) => records.map((record) => record.id);

export function describeAnnouncementRepositoryContract(
  backend: string,
  createHarness: () => Promise<RepositoryHarness<AnnouncementRepository>>,
): void {
  describe(`the ${backend} announcements`, () => {
    let harness: RepositoryHarness<AnnouncementRepository>;
    let repository: AnnouncementRepository;
    beforeEach(async () => {
      harness = await createHarness();
      repository = harness.repository;
    });
    afterEach(() => harness.cleanup());

    it("keeps an announcement whole, to the millisecond and as written, across a restart", async () => {
      const written = anAnnouncement({
        text: "  プロキシが止まっています\n五分待ってください 🙏 <b>&amp;</b>  ",
      });
      await repository.add(written);
      await repository.add(anAnnouncement({ id: "a2", section: "mon-am", classId: null }));
      const reopened = await harness.reopen();
      expect(await reopened.get("a1")).toEqual(written);
      expect(await reopened.get("a2")).toEqual(
        anAnnouncement({ id: "a2", section: "mon-am", classId: null }),
      );
      expect(await reopened.get("a3")).toBeUndefined();
    });

    it("lists a lab's announcements newest first, up to the limit, or those a TA's sections reach", async () => {
      await repository.add(anAnnouncement({ id: "whole", createdAt: nine }));
      await repository.add(anAnnouncement({ id: "monday", section: "mon-am", createdAt: nine + minute }));
      await repository.add(
        anAnnouncement({ id: "tuesday", section: "tue-pm", createdAt: nine + 2 * minute }),
      );
      await repository.add(
        anAnnouncement({ id: "elsewhere", labId: "git-workflow", createdAt: nine + 3 * minute }),
      );
      expect(ids(await repository.listForLab("linux-basics", { limit: 10 }))).toEqual([
        "tuesday",
        "monday",
        "whole",
      ]);
      expect(ids(await repository.listForLab("linux-basics", { limit: 2 }))).toEqual(["tuesday", "monday"]);
      expect(ids(await repository.listForLab("linux-basics", { sections: ["mon-am"], limit: 10 }))).toEqual([
        "monday",
        "whole",
      ]);
      expect(
        ids(await repository.listForLab("linux-basics", { sections: ["mon-am", "tue-pm"], limit: 10 })),
      ).toEqual(["tuesday", "monday", "whole"]);
      expect(ids(await repository.listForLab("linux-basics", { sections: [], limit: 10 }))).toEqual([
        "whole",
      ]);
      expect(await repository.listForLab("no-such-lab", { limit: 10 })).toEqual([]);
    });

    it("shows a student their lab's announcements to the whole lab and to their section, from `since` on", async () => {
      await repository.add(anAnnouncement({ id: "too-old", createdAt: nine - 61 * minute }));
      await repository.add(anAnnouncement({ id: "just-in", createdAt: nine - 60 * minute }));
      await repository.add(anAnnouncement({ id: "theirs", section: "mon-am", createdAt: nine + minute }));
      await repository.add(anAnnouncement({ id: "others", section: "tue-pm", createdAt: nine + 2 * minute }));
      await repository.add(anAnnouncement({ id: "other-lab", labId: "git-workflow", createdAt: nine }));
      expect(ids(await repository.shownTo(aliceView()))).toEqual(["theirs", "just-in"]);
      // A session outside any section sees the whole lab's only.
      expect(ids(await repository.shownTo(aliceView({ section: null })))).toEqual(["just-in"]);
      expect(ids(await repository.shownTo(aliceView({ limit: 1 })))).toEqual(["theirs"]);
    });

    it("hides what a student dismissed from them alone, and takes a second dismissal as the first", async () => {
      await repository.add(anAnnouncement({ id: "a1" }));
      await repository.add(anAnnouncement({ id: "a2", createdAt: nine + minute }));
      await repository.dismiss("a2", "alice", nine + 2 * minute);
      await repository.dismiss("a2", "alice", nine + 3 * minute);
      const reopened = await harness.reopen();
      expect(ids(await reopened.shownTo(aliceView()))).toEqual(["a1"]);
      expect(ids(await reopened.shownTo(aliceView({ username: "bob" })))).toEqual(["a2", "a1"]);
      // Staff lists still hold it.
      expect(ids(await reopened.listForLab("linux-basics", { limit: 10 }))).toEqual(["a2", "a1"]);
    });

    it("refuses a second announcement with the same id, an empty text, and a dismissal of none", async () => {
      await repository.add(anAnnouncement());
      await expect(repository.add(anAnnouncement({ text: "again" }))).rejects.toThrow();
      await expect(repository.add(anAnnouncement({ id: "a2", text: "" }))).rejects.toThrow();
      await expect(repository.dismiss("none", "alice", nine)).rejects.toThrow();
      expect(ids(await repository.listForLab("linux-basics", { limit: 10 }))).toEqual(["a1"]);
    });
  });
}
