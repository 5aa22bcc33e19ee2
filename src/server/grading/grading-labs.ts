// The labs grading is configured with, by id. Self-checks, runs and exports all name a lab, and one
// that is not configured is the same 404 wherever it is asked for.
import type { Lab } from "../../common/lab.ts";
import { labNotFound } from "../errors/domain-error.ts";

export class GradingLabs {
  private readonly byId: Map<string, Lab>;

  constructor(labs: readonly Lab[]) {
    this.byId = new Map(labs.map((lab) => [lab.id, lab]));
  }

  /** undefined: no lab of that id is configured (any more). */
  find(labId: string): Lab | undefined {
    return this.byId.get(labId);
  }

  require(labId: string): Lab {
    const lab = this.byId.get(labId);
    if (!lab) throw labNotFound(labId);
    return lab;
  }
}
