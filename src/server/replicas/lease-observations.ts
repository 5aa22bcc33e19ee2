// When another replica's lease has run out, by client-go's rule: not by its renewTime, which the
// holder's clock wrote, but by how long this replica has seen the lease unchanged on its own
// monotonic clock. Clocks that disagree between machines then cannot hand one lease to two holders.
import type { LeaseRecord } from "../kube/leases.ts";

export class LeaseObservations {
  private readonly seen = new Map<string, { resourceVersion: string; at: number }>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Notes the lease as read just now; its clock starts over whenever it changed. */
  observe(lease: LeaseRecord): void {
    const known = this.seen.get(lease.name);
    if (known?.resourceVersion !== lease.resourceVersion) {
      this.seen.set(lease.name, { resourceVersion: lease.resourceVersion, at: this.now() });
    }
  }

  /** Nobody holds it (released), or it went unrenewed for its whole duration as seen from here. */
  isFree(lease: LeaseRecord): boolean {
    this.observe(lease);
    if (lease.holderIdentity === "") return true;
    const known = this.seen.get(lease.name);
    return known !== undefined && this.now() - known.at >= lease.leaseDurationSeconds * 1000;
  }

  /** How long this replica has seen the lease unchanged (0 the first time it sees it). */
  unchangedForMs(lease: LeaseRecord): number {
    this.observe(lease);
    const known = this.seen.get(lease.name);
    return known === undefined ? 0 : this.now() - known.at;
  }

  forget(name: string): void {
    this.seen.delete(name);
  }
}
