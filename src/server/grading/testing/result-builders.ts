// SessionResult builders for tests: sensible defaults, override what the test is about.
import type { CheckResult, SessionResult } from "../../../common/grading.ts";

type Gradable = Extract<SessionResult, { gradable: true }>;
type Ungradable = Extract<SessionResult, { gradable: false }>;

export function checkResult(overrides: Partial<CheckResult> = {}): CheckResult {
  return {
    checkId: "hello-file",
    title: "Create ~/hello.txt",
    points: 2,
    maxPoints: 2,
    passed: true,
    message: "Passed.",
    outputExcerpt: "",
    durationMs: 12,
    ...overrides,
  };
}

export function gradableResult(overrides: Partial<Gradable> = {}): Gradable {
  const checks = overrides.checks ?? [checkResult()];
  return {
    sessionId: "linux-basics-aaaa1111",
    labId: "linux-basics",
    owner: "alice",
    maxScore: checks.reduce((sum, check) => sum + check.maxPoints, 0),
    gradedAt: "2030-01-01T10:00:00.000Z",
    gradable: true,
    reason: null,
    score: checks.reduce((sum, check) => sum + check.points, 0),
    checks,
    ...overrides,
  };
}

export function ungradableResult(overrides: Partial<Ungradable> = {}): Ungradable {
  return {
    sessionId: "linux-basics-aaaa1111",
    labId: "linux-basics",
    owner: "alice",
    maxScore: 2,
    gradedAt: "2030-01-01T10:00:00.000Z",
    gradable: false,
    reason: "The VM is not running.",
    score: null,
    checks: [],
    ...overrides,
  };
}
