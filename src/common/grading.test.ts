import { describe, expect, it } from "vitest";
import type { AgentCheckResult as WireResult } from "./agent-protocol.ts";
import { AgentCheckResponse, SessionResult, scoreChecks, type GradedCheck } from "./grading.ts";

const check = (overrides: Partial<GradedCheck> = {}): GradedCheck => ({
  id: "web",
  title: "nginx serves the page",
  points: 4,
  hint: "Is nginx running?",
  ...overrides,
});

const result = (overrides: Partial<WireResult> = {}): WireResult => ({
  id: "web",
  exitCode: 0,
  signal: null,
  timedOut: false,
  output: "",
  outputTruncated: false,
  durationMs: 120,
  score: null,
  ...overrides,
});

const scoreOne = (labCheck: GradedCheck, agentResult: WireResult) => {
  const [only] = scoreChecks([labCheck], [agentResult]).checks;
  if (!only) throw new Error("no check scored");
  return only;
};

describe("scoreChecks", () => {
  it("gives full points for exit code 0 without a score line", () => {
    expect(scoreOne(check(), result({ output: "ok\n" }))).toEqual({
      checkId: "web",
      title: "nginx serves the page",
      points: 4,
      maxPoints: 4,
      passed: true,
      message: "Passed.",
      outcome: { kind: "passed" },
      outputExcerpt: "ok",
      durationMs: 120,
    });
  });

  it("gives nothing for a non-zero exit and shows the exit code and the hint", () => {
    const scored = scoreOne(check(), result({ exitCode: 7 }));
    expect(scored).toMatchObject({ points: 0, passed: false });
    expect(scored.message).toBe("Exited with code 7. Hint: Is nginx running?");
  });

  it("lets a score line give partial credit, with exit code 0 or not", () => {
    for (const exitCode of [0, 1]) {
      const scored = scoreOne(check(), result({ exitCode, score: 0.25 }));
      expect(scored).toMatchObject({ points: 1, maxPoints: 4, passed: false });
      expect(scored.message).toBe("Partial credit: 25%. Hint: Is nginx running?");
    }
  });

  it("lets a score line decide over the exit code in both directions", () => {
    expect(scoreOne(check(), result({ exitCode: 0, score: 0 }))).toMatchObject({
      points: 0,
      passed: false,
      message: "Scored 0. Hint: Is nginx running?",
    });
    expect(scoreOne(check(), result({ exitCode: 3, score: 1 }))).toMatchObject({ points: 4, passed: true });
  });

  it("gives nothing for a timed-out check, whatever it printed", () => {
    const scored = scoreOne(
      check({ hint: null }),
      result({ exitCode: null, signal: "SIGKILL", timedOut: true, score: 1, durationMs: 30_200 }),
    );
    expect(scored).toMatchObject({ points: 0, passed: false, message: "Timed out after 30 s." });
  });

  it("gives nothing for a check ended by a signal, whatever score line it printed", () => {
    const scored = scoreOne(check({ hint: null }), result({ exitCode: null, signal: "SIGTERM", score: 1 }));
    expect(scored).toMatchObject({ points: 0, passed: false, message: "Stopped by SIGTERM." });
  });

  it("names the signal that ended a check", () => {
    expect(scoreOne(check({ hint: undefined }), result({ exitCode: null, signal: "SIGSEGV" })).message).toBe(
      "Stopped by SIGSEGV.",
    );
  });

  it("gives the outcome and hint as data with their translations, so pages can say them in other languages", () => {
    const translated = check({
      translations: { title: { ja: "nginx がページを返す" }, hint: { zh: "nginx 在运行吗？" } },
    });
    expect(scoreOne(translated, result({ exitCode: 7 }))).toMatchObject({
      outcome: { kind: "exit", code: 7 },
      hint: "Is nginx running?",
      translations: { title: { ja: "nginx がページを返す" }, hint: { zh: "nginx 在运行吗？" } },
    });
    const passed = scoreOne(translated, result());
    expect(passed.hint).toBeUndefined();
    expect(passed.translations).toEqual({ title: { ja: "nginx がページを返す" } });
    expect(scoreOne(check(), result({ timedOut: true, durationMs: 30_200 })).outcome).toEqual({
      kind: "timed-out",
      seconds: 30,
    });
  });

  it("keeps the last 20 lines of output as the excerpt", () => {
    const output = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n") + "\n\n";
    const excerpt = scoreOne(check(), result({ exitCode: 1, output })).outputExcerpt.split("\n");
    expect(excerpt).toHaveLength(20);
    expect(excerpt[0]).toBe("line 11");
    expect(excerpt.at(-1)).toBe("line 30");
  });

  it("bounds the excerpt in characters when one line is huge", () => {
    const excerpt = scoreOne(check(), result({ output: "x".repeat(10_000) + "END" })).outputExcerpt;
    expect(excerpt).toHaveLength(4000);
    expect(excerpt.endsWith("END")).toBe(true);
  });

  it("sums the score in lab order, rounded to hundredths", () => {
    const checks = [
      check({ id: "a", points: 1 }),
      check({ id: "b", points: 1 }),
      check({ id: "c", points: 1 }),
    ];
    const scored = scoreChecks(checks, [
      result({ id: "c", score: 0.1 }),
      result({ id: "a", score: 0.1 }),
      result({ id: "b", score: 0.1 }),
      result({ id: "b", score: 1 }),
      result({ id: "not-in-lab" }),
    ]);
    expect(scored.checks.map((c) => c.checkId)).toEqual(["a", "b", "c"]);
    expect(scored.score).toBe(0.3);
    expect(scored.maxScore).toBe(3);
  });

  it("throws when the agent left out a check, so the caller can report it as not gradable", () => {
    expect(() => scoreChecks([check({ id: "a" }), check({ id: "b" })], [result({ id: "a" })])).toThrow(
      'The grading agent returned no result for check "b".',
    );
  });
});

describe("schemas", () => {
  const base = {
    sessionId: "l-abcdefgh",
    labId: "l",
    owner: "alice",
    maxScore: 4,
    gradedAt: "2025-01-01T00:00:00Z",
  };

  it("accepts a graded result and an ungradable one", () => {
    const graded = { ...base, gradable: true, reason: null, score: 4, checks: [] };
    const ungradable = {
      ...base,
      gradable: false,
      reason: "The VM is not running.",
      score: null,
      checks: [],
    };
    expect(SessionResult.parse(graded)).toEqual(graded);
    expect(SessionResult.parse(ungradable)).toEqual(ungradable);
  });

  it("refuses a score on an ungradable result, so a broken VM never reads as zero points", () => {
    const result = SessionResult.safeParse({
      ...base,
      gradable: false,
      reason: "down",
      score: 0,
      checks: [],
    });
    expect(result.success).toBe(false);
  });

  it("refuses an agent score outside 0..1", () => {
    expect(AgentCheckResponse.safeParse({ results: [result({ score: 1.5 })] }).success).toBe(false);
    expect(AgentCheckResponse.safeParse({ results: [result({ score: 0.5 })] }).success).toBe(true);
  });
});
