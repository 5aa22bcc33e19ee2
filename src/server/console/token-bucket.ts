// Rate limit for a viewer's keystrokes. A debt instead of a refusal: input past the limit is still
// delivered, and the caller stops reading the viewer's socket until the debt is paid, so a huge
// paste slows down (TCP pushes back on the browser) instead of losing characters.
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly capacity: number,
    private readonly refillPerSecond: number,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    this.tokens = capacity;
    this.updatedAt = now();
  }

  /** Takes `amount`; the answer is how long (ms) to wait before taking more, 0 when within the limit. */
  take(amount: number): number {
    this.refill();
    this.tokens -= amount;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.refillPerSecond) * 1000);
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(
      this.capacity,
      this.tokens + ((now - this.updatedAt) / 1000) * this.refillPerSecond,
    );
    this.updatedAt = now;
  }
}
