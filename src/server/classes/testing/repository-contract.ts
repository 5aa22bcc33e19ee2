// What every ClassRepository must do, as a suite any backend runs with its own harness.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RepositoryHarness } from "../../db/testing/repository-harness.ts";
import type { ClassRecord, ClassRepository } from "../repository.ts";

const hour = 3_600_000;
const nine = Date.UTC(2030, 2, 2, 9, 0, 0, 123);

export function aClass(overrides: Partial<ClassRecord> = {}): ClassRecord {
  return {
    id: "c1",
    labId: "linux-basics",
    startsAt: nine,
    endsAt: nine + 2 * hour,
    expected: 30,
    createdBy: "ivan",
    createdAt: nine - 24 * hour,
    ...overrides,
  };
}

export function describeClassRepositoryContract(
  backend: string,
  createHarness: () => Promise<RepositoryHarness<ClassRepository>>,
): void {
  describe(`the ${backend} class schedule`, () => {
    let harness: RepositoryHarness<ClassRepository>;
    beforeEach(async () => {
      harness = await createHarness();
    });
    afterEach(() => harness.cleanup());

    it("keeps a class whole, to the millisecond, across a restart", async () => {
      await harness.repository.add(aClass());
      const reopened = await harness.reopen();
      expect(await reopened.get("c1")).toEqual(aClass());
      expect(await reopened.get("c2")).toBeUndefined();
    });

    it("lists the classes not over yet, soonest start first", async () => {
      await harness.repository.add(
        aClass({ id: "late", startsAt: nine + 3 * hour, endsAt: nine + 4 * hour }),
      );
      await harness.repository.add(aClass({ id: "over", startsAt: nine - 3 * hour, endsAt: nine - hour }));
      await harness.repository.add(aClass({ id: "soon" }));
      const listed = await harness.repository.endingAfter(nine);
      expect(listed.map((each) => each.id)).toEqual(["soon", "late"]);
      expect(await harness.repository.endingAfter(nine + 2 * hour)).toHaveLength(1);
    });

    it("removes a class once, and says whether there was one", async () => {
      await harness.repository.add(aClass());
      expect(await harness.repository.remove("c1")).toBe(true);
      expect(await harness.repository.remove("c1")).toBe(false);
      expect(await harness.repository.get("c1")).toBeUndefined();
    });

    it("refuses a second class with the same id, and one that ends before it starts", async () => {
      await harness.repository.add(aClass());
      await expect(harness.repository.add(aClass())).rejects.toThrow();
      await expect(harness.repository.add(aClass({ id: "c2", endsAt: nine - hour }))).rejects.toThrow();
      expect(await harness.repository.endingAfter(0)).toEqual([aClass()]);
    });
  });
}
