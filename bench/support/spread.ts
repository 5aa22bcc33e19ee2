// Figures from a few noisy runs: the median with the smallest and largest beside it, and the paired
// ratio (each round's ratio of two variants measured back to back, then their median), which keeps
// what a busy machine does to both within a round out of the comparison.
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return { median: NaN, min: NaN, max: NaN };
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)! };
}

/** The nearest-rank value at `quantile` (0 to 1) of samples sorted in ascending order. */
export function percentile(sorted: readonly number[], quantile: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(quantile * sorted.length) - 1)]!;
}

/** The median and spread of numerator / denominator, round by round. */
export function pairedRatio(numerators: readonly number[], denominators: readonly number[]): Spread {
  return spread(numerators.map((value, round) => value / denominators[round]!));
}

/** "22.2 [20.5..25.2]" */
export function formatSpread({ median, min, max }: Spread, digits = 1, unit = ""): string {
  const fixed = (value: number) => value.toFixed(digits);
  return `${fixed(median)}${unit} [${fixed(min)}..${fixed(max)}]`;
}

export const mb = (bytes: number) => bytes / (1024 * 1024);
