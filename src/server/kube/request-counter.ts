// How many requests the console sent to the Kubernetes API, by verb and answer. The dashboard bench
// reads it to show what browser polling costs the cluster; /metrics exports it.

export type KubeVerb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete";
/** The HTTP status, or "error" when no answer came back. */
export type KubeOutcome = number | "error";

export interface KubeRequestCount {
  verb: KubeVerb;
  code: KubeOutcome;
  count: number;
}

export class KubeRequestCounter {
  private readonly counts = new Map<string, KubeRequestCount>();

  record(verb: KubeVerb, code: KubeOutcome): void {
    const key = `${verb} ${code}`;
    const entry = this.counts.get(key);
    if (entry) entry.count += 1;
    else this.counts.set(key, { verb, code, count: 1 });
  }

  snapshot(): KubeRequestCount[] {
    return [...this.counts.values()].map((entry) => ({ ...entry }));
  }

  total(verb?: KubeVerb): number {
    let sum = 0;
    for (const entry of this.counts.values())
      if (verb === undefined || entry.verb === verb) sum += entry.count;
    return sum;
  }
}
