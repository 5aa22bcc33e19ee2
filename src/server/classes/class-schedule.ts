// Scheduling and cancelling classes, and how each one's warm pool stands (counted from the cluster's
// VMs on every read, so every replica answers the same).
import { randomBytes } from "node:crypto";
import { maxClassHours, type NewClass, type ScheduledClass } from "../../common/classes-api.ts";
import type { Lab } from "../../common/lab.ts";
import { DomainError, labNotFound } from "../errors/domain-error.ts";
import type { SessionSnapshot, SessionSource } from "../sessions/source.ts";
import { claimable } from "./warm-claims.ts";
import { claimedByClass } from "./warm-pool.ts";
import { bootingFrom, poolTarget, type PoolTiming } from "./pool-plan.ts";
import type { ClassRecord, ClassRepository } from "./repository.ts";

export interface ClassScheduleDeps {
  classes: ClassRepository;
  source: SessionSource;
  labs: Lab[];
  timing: PoolTiming;
  now: () => Date;
}

/** Also a label value (labconsole.dev/warm-for): 12 lowercase letters and digits. */
function newClassId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return [...randomBytes(12)].map((byte) => alphabet[byte % alphabet.length]).join("");
}

export class ClassSchedule {
  constructor(private readonly deps: ClassScheduleDeps) {}

  async list(): Promise<ScheduledClass[]> {
    const records = await this.deps.classes.endingAfter(this.deps.now().getTime());
    const snapshot = await this.deps.source.snapshot();
    const claimed = claimedByClass(snapshot);
    return records.map((record) => this.describe(record, snapshot, claimed));
  }

  async add(input: NewClass, by: string): Promise<ScheduledClass> {
    const lab = this.deps.labs.find((each) => each.id === input.labId);
    if (!lab) throw labNotFound(input.labId);
    const startsAt = Date.parse(input.startsAt);
    const endsAt = Date.parse(input.endsAt);
    const now = this.deps.now().getTime();
    if (endsAt <= startsAt) throw invalid("class_ends_before_start", "A class must end after it starts.");
    if (endsAt - startsAt > maxClassHours * 3_600_000) {
      throw invalid("class_too_long", `A class lasts at most ${maxClassHours} hours.`, {
        hours: maxClassHours,
      });
    }
    if (endsAt <= now) throw invalid("class_in_past", "This class would be over already.");
    const record: ClassRecord = {
      id: newClassId(),
      labId: lab.id,
      startsAt,
      endsAt,
      expected: input.expected,
      createdBy: by,
      createdAt: now,
    };
    await this.deps.classes.add(record);
    const snapshot = await this.deps.source.snapshot();
    return this.describe(record, snapshot, claimedByClass(snapshot));
  }

  /** The pool deletes the class's unclaimed VMs on its next pass; sessions already claimed go on. */
  async cancel(id: string): Promise<ClassRecord> {
    const record = await this.deps.classes.get(id);
    if (!record || !(await this.deps.classes.remove(id))) {
      throw new DomainError("not_found", "class_not_found", `There is no class ${id}.`, { id });
    }
    return record;
  }

  private describe(
    record: ClassRecord,
    snapshot: SessionSnapshot,
    claimedBy: ReadonlyMap<string, number>,
  ): ScheduledClass {
    const warm = snapshot.warm.filter((vm) => vm.classId === record.id && !vm.vm.metadata.deletionTimestamp);
    const ready = claimable({ ...snapshot, warm }, record.labId).length;
    const claimed = claimedBy.get(record.id) ?? 0;
    const now = this.deps.now().getTime();
    return {
      id: record.id,
      labId: record.labId,
      startsAt: new Date(record.startsAt).toISOString(),
      endsAt: new Date(record.endsAt).toISOString(),
      expected: record.expected,
      createdBy: record.createdBy,
      createdAt: new Date(record.createdAt).toISOString(),
      warmFrom: new Date(bootingFrom(record, this.deps.timing)).toISOString(),
      target: poolTarget(record, claimed, now, this.deps.timing),
      pool: { ready, booting: warm.length - ready, claimed },
    };
  }
}

function invalid(
  reason: "class_ends_before_start" | "class_too_long" | "class_in_past",
  message: string,
  params = {},
) {
  return new DomainError("invalid", reason, message, params);
}
