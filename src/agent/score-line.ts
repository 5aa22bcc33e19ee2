// Partial credit: a check may end its stdout with a line `score=x`, 0 <= x <= 1.
const scoreLine = /^score=(\d+(?:\.\d+)?|\.\d+)$/;

/** The score from the last non-empty line of stdout, or null (a value outside 0..1 counts as none). */
export function parseScoreLine(stdout: string): number | null {
  const lastLine = stdout.trimEnd().split("\n").pop()?.trim() ?? "";
  const match = scoreLine.exec(lastLine);
  if (!match?.[1]) return null;
  const score = Number(match[1]);
  return score <= 1 ? score : null;
}
