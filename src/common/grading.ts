// Grading results: one shape for every grade, and the rule that turns agent results into points.
import * as z from "zod/mini";
import type * as Wire from "./agent-protocol.ts";
import { Translations } from "./translations.ts";

/** How a check ended, as data, so a page can say it in the reader's language. */
export const CheckOutcome = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("passed") }),
  z.object({ kind: z.literal("timed-out"), seconds: z.number() }),
  z.object({ kind: z.literal("partial"), percent: z.number() }),
  z.object({ kind: z.literal("scored-zero") }),
  z.object({ kind: z.literal("signal"), signal: z.nullable(z.string()) }),
  z.object({ kind: z.literal("exit"), code: z.number() }),
]);
export type CheckOutcome = z.output<typeof CheckOutcome>;

export const CheckResult = z.object({
  checkId: z.string(),
  title: z.string(),
  points: z.number(),
  maxPoints: z.number(),
  /** Full points. A check with partial credit has points > 0 and passed false. */
  passed: z.boolean(),
  /** In English: the outcome, then the hint when the check fell short. */
  message: z.string(),
  // The message's parts for other languages; results recorded before they existed lack them.
  outcome: z.optional(CheckOutcome),
  /** The lab's hint (plain text), on a check that fell short. */
  hint: z.optional(z.string()),
  translations: z.optional(z.object({ title: z.optional(Translations), hint: z.optional(Translations) })),
  /** The last lines of the check's output. */
  outputExcerpt: z.string(),
  durationMs: z.number(),
});
export type CheckResult = z.output<typeof CheckResult>;

const resultBase = {
  sessionId: z.string(),
  labId: z.string(),
  owner: z.string(),
  maxScore: z.number(),
  gradedAt: z.string(),
};

/**
 * `gradable: false` means the VM or its agent could not be reached: no score at all, so an
 * infrastructure failure never counts as zero points.
 */
export const SessionResult = z.discriminatedUnion("gradable", [
  z.object({
    ...resultBase,
    gradable: z.literal(true),
    reason: z.null(),
    score: z.number(),
    checks: z.array(CheckResult),
  }),
  z.object({
    ...resultBase,
    gradable: z.literal(false),
    reason: z.string(),
    score: z.null(),
    checks: z.array(CheckResult).check(z.length(0)),
  }),
]);
export type SessionResult = z.output<typeof SessionResult>;

// Agent responses come from inside a student's VM: the BFF parses them before trusting a field.
export const AgentCheckResult = z.object({
  id: z.string(),
  exitCode: z.nullable(z.number().check(z.int())),
  signal: z.nullable(z.string()),
  timedOut: z.boolean(),
  output: z.string(),
  outputTruncated: z.boolean(),
  durationMs: z.number().check(z.nonnegative()),
  score: z.nullable(z.number().check(z.minimum(0), z.maximum(1))),
}) satisfies z.ZodMiniType<Wire.AgentCheckResult>;
export type AgentCheckResult = z.output<typeof AgentCheckResult>;

export const AgentCheckResponse = z.object({
  results: z.array(AgentCheckResult),
}) satisfies z.ZodMiniType<Wire.AgentCheckResponse>;
export type AgentCheckResponse = z.output<typeof AgentCheckResponse>;

export const AgentHealth = z.object({
  status: z.literal("ok"),
  version: z.string(),
  runAs: z.object({ user: z.string(), home: z.string() }),
}) satisfies z.ZodMiniType<Wire.AgentHealth>;
export type AgentHealth = z.output<typeof AgentHealth>;

export const AgentActivity = z.object({
  cpuSeconds: z.number(),
  processes: z.number(),
  logins: z.array(z.object({ user: z.string(), tty: z.string(), idleSeconds: z.number() })),
}) satisfies z.ZodMiniType<Wire.AgentActivity>;
export type AgentActivity = z.output<typeof AgentActivity>;

/** Codes are those of Wire.AgentErrorCode; kept open so a newer agent's codes still parse. */
export const AgentErrorBody = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
export type AgentErrorBody = z.output<typeof AgentErrorBody>;

/** What scoring needs of a lab's check (the lab format has more). */
export interface GradedCheck {
  id: string;
  title: string;
  points: number;
  hint?: string | null;
  translations?: { title?: Translations; hint?: Translations };
}

const excerptLines = 20;
const excerptChars = 4000;

/**
 * The scoring rule. A last stdout line `score=x` (0 <= x <= 1) decides: the check earns x of its
 * points, whatever the exit code. Without such a line the exit code decides: 0 earns all points,
 * anything else none. A check that timed out earns nothing. `passed` means all points.
 *
 * Throws when the agent left out one of the lab's checks: that is an agent failure, which the
 * caller reports as `gradable: false`, not as a failed check.
 */
export function scoreChecks(
  labChecks: readonly GradedCheck[],
  agentResults: readonly Wire.AgentCheckResult[],
): { checks: CheckResult[]; score: number; maxScore: number } {
  const resultsById = new Map<string, Wire.AgentCheckResult>();
  for (const result of agentResults) {
    if (!resultsById.has(result.id)) resultsById.set(result.id, result);
  }
  const checks = labChecks.map((check) => {
    const result = resultsById.get(check.id);
    if (!result) throw new Error(`The grading agent returned no result for check "${check.id}".`);
    return scoreOne(check, result);
  });
  return {
    checks,
    score: roundPoints(checks.reduce((sum, check) => sum + check.points, 0)),
    maxScore: roundPoints(labChecks.reduce((sum, check) => sum + check.points, 0)),
  };
}

function scoreOne(check: GradedCheck, result: Wire.AgentCheckResult): CheckResult {
  const fraction = earnedFraction(result);
  const passed = fraction === 1;
  const outcome = passed ? ({ kind: "passed" } as const) : shortfall(result, fraction);
  const hint = passed ? undefined : (check.hint ?? undefined);
  const translations = {
    ...(check.translations?.title && { title: check.translations.title }),
    ...(hint !== undefined && check.translations?.hint && { hint: check.translations.hint }),
  };
  return {
    checkId: check.id,
    title: check.title,
    points: roundPoints(fraction * check.points),
    maxPoints: check.points,
    passed,
    message: withHint(describeOutcome(outcome), hint),
    outcome,
    ...(hint !== undefined && { hint }),
    ...(Object.keys(translations).length > 0 && { translations }),
    outputExcerpt: outputExcerpt(result.output),
    durationMs: result.durationMs,
  };
}

function earnedFraction(result: Wire.AgentCheckResult): number {
  // A check ended by a signal did not finish: whatever score line it printed does not count.
  if (result.timedOut || result.exitCode === null) return 0;
  if (result.score !== null) return result.score;
  return result.exitCode === 0 ? 1 : 0;
}

function shortfall(result: Wire.AgentCheckResult, fraction: number): CheckOutcome {
  if (result.timedOut) return { kind: "timed-out", seconds: Math.round(result.durationMs / 1000) };
  if (result.exitCode === null) return { kind: "signal", signal: result.signal };
  if (fraction > 0) return { kind: "partial", percent: Math.round(fraction * 100) };
  if (result.score !== null) return { kind: "scored-zero" };
  return { kind: "exit", code: result.exitCode };
}

function describeOutcome(outcome: CheckOutcome): string {
  switch (outcome.kind) {
    case "passed":
      return "Passed.";
    case "timed-out":
      return `Timed out after ${outcome.seconds} s.`;
    case "partial":
      return `Partial credit: ${outcome.percent}%.`;
    case "scored-zero":
      return "Scored 0.";
    case "signal":
      return `Stopped by ${outcome.signal ?? "a signal"}.`;
    case "exit":
      return `Exited with code ${outcome.code}.`;
  }
}

function withHint(text: string, hint: string | undefined): string {
  return hint ? `${text} Hint: ${hint}` : text;
}

/** The last lines of the output, bounded in characters too so one huge line cannot flood the page. */
function outputExcerpt(output: string): string {
  const lines = output.replace(/\n+$/, "").split("\n");
  const tail = lines.slice(-excerptLines).join("\n");
  return tail.length > excerptChars ? tail.slice(tail.length - excerptChars) : tail;
}

/** Points in hundredths, so 0.1 + 0.2 shows as 0.3. */
function roundPoints(points: number): number {
  return Math.round(points * 100) / 100;
}
