// One person's search time, shared by their walls: spent by any, saved up to a cap, refilled with
// the share of the time that passes.
import { describe, expect, it } from "vitest";
import { SearchBudget } from "./search-budget.ts";

describe("a person's search budget", () => {
  it("lets their walls together spend no more than its share of the time", () => {
    let clock = 0;
    const budget = new SearchBudget(0.25, 250, () => clock);
    // Three walls, one budget: what one spends, the others do not have.
    budget.spend(200);
    budget.spend(50);
    expect(budget.leftMs).toBe(0);
    budget.spend(5); // a slice that ran past it
    expect(budget.leftMs).toBeLessThan(0);
    clock += 1000;
    expect(budget.leftMs).toBe(245);
    // Saved up to one interval's worth, however long nothing searched.
    clock += 60_000;
    expect(budget.leftMs).toBe(250);
  });
});
