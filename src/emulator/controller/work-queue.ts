// A deduplicating queue of object keys, drained on a later tick: controllers react to bursts of store
// events with one reconcile per object, and never re-enter themselves from inside a store write.
export class WorkQueue {
  private readonly keys = new Set<string>();
  private scheduled: NodeJS.Immediate | undefined;
  /** One pending delayed add per key: a reconcile that backs off again does not stack timers. */
  private readonly delayed = new Map<string, { timer: NodeJS.Timeout; due: number }>();
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly reconcile: (key: string) => void,
  ) {}

  add(key: string): void {
    if (this.stopped) return;
    this.keys.add(key);
    this.scheduled ??= setImmediate(() => this.drain());
  }

  /** Adds the key once `delayMs` has passed (a controller's backoff); the earlier of two waits wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    const due = Date.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.due <= due) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.delayed.set(key, { timer, due });
  }

  stop(): void {
    this.stopped = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    this.keys.clear();
  }

  private drain(): void {
    this.scheduled = undefined;
    const batch = [...this.keys];
    this.keys.clear();
    for (const key of batch) {
      try {
        this.reconcile(key);
      } catch (error) {
        console.error(`emulator: ${this.name} failed for ${key}:`, error);
      }
    }
  }
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf("/");
  return slash < 0
    ? { namespace: "", name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
