// When a session's end is near enough to warn about: the last 10, 5 and 1 minutes.

export const warningMinutes = [10, 5, 1] as const;
export type WarningLevel = (typeof warningMinutes)[number];

/** The smallest threshold the time left is within, or null while more than 10 minutes are left or it is over. */
export function expiryWarningLevel(msLeft: number): WarningLevel | null {
  if (msLeft <= 0) return null;
  let level: WarningLevel | null = null;
  for (const minutes of warningMinutes) if (msLeft <= minutes * 60_000) level = minutes;
  return level;
}
