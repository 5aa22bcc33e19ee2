// How much of the BFF's time one person's class walls may spend searching screens: a share of the
// time, saved up to one screen interval's worth, and shared by every wall that person has open. Per
// wall, a TA with many walls would multiply it; per person, more walls only split it.
export class SearchBudget {
  private availableMs: number;
  private refilledAt: number;

  constructor(
    /** The share of the time (0 to 1) searches may take, all walls together. */
    private readonly share: number,
    /** The most that is saved up while nothing searches. */
    private readonly capacityMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.availableMs = capacityMs;
    this.refilledAt = now();
  }

  /** What may be spent now; 0 or less means wait. */
  get leftMs(): number {
    this.refill();
    return this.availableMs;
  }

  spend(ms: number): void {
    this.refill();
    this.availableMs -= ms;
  }

  private refill(): void {
    const now = this.now();
    this.availableMs = Math.min(this.capacityMs, this.availableMs + (now - this.refilledAt) * this.share);
    this.refilledAt = now;
  }
}
