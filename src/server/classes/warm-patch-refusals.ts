// Patches on warm VMs that the cluster refused for another reason than the race their `test` guards
// against. Losing the race is expected (another launch took the VM, the pool let it go); anything
// else, such as an admission webhook refusing a label change, would turn every claim into a cold
// start or keep every VM from being marked ready, and nobody would know: each is logged, counted in
// /metrics (lab_console_warm_patch_refusals_total) and named by the doctor's "warm-patches" check.
import type { Counter } from "../metrics/registry.ts";

export type WarmPatch = "claim" | "ready";

export interface WarmPatchRefusal {
  at: string;
  vm: string;
  patch: WarmPatch;
  message: string;
}

export interface WarmPatchRefusalSummary {
  count: number;
  last: WarmPatchRefusal | undefined;
}

export class WarmPatchRefusals {
  private count = 0;
  private last: WarmPatchRefusal | undefined;

  constructor(
    private readonly deps: {
      counter: Counter;
      now: () => Date;
      log: { warn(object: object, message: string): void };
    },
  ) {}

  record(vm: string, patch: WarmPatch, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.count += 1;
    this.last = { at: this.deps.now().toISOString(), vm, patch, message };
    this.deps.counter.inc({ patch });
    this.deps.log.warn({ err: error, vm, patch }, "the cluster refused a patch on a warm VM");
  }

  summary(): WarmPatchRefusalSummary {
    return { count: this.count, last: this.last };
  }
}
