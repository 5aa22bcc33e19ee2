import { describe, expect, it } from "vitest";
import { csvCell, toGradesCsv, toLabGrades } from "./export.ts";
import { aCheck, aGradingLab } from "./testing/grading-fixtures.ts";
import { checkResult, gradableResult, ungradableResult } from "./testing/result-builders.ts";

const lab = aGradingLab([
  aCheck({ id: "score", points: 2, run: "true" }),
  aCheck({ id: "lab", points: 3, run: "true" }),
]);

describe("csvCell", () => {
  it("quotes commas, quotes and line breaks as RFC 4180 says", () => {
    expect(csvCell("plain")).toBe("plain");
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell("two\nlines")).toBe('"two\nlines"');
    expect(csvCell("")).toBe("");
  });

  it("defuses text a spreadsheet would run as a formula", () => {
    for (const start of ["=", "+", "-", "@", "\t", "\r"]) expect(csvCell(`${start}SUM(A1)`)).toMatch(/^"?'/);
    expect(csvCell("=1+2,3")).toBe(`"'=1+2,3"`);
    expect(csvCell("a=b")).toBe("a=b");
  });

  it("writes numbers as numbers", () => {
    expect(csvCell(0.3)).toBe("0.3");
    expect(csvCell(7)).toBe("7");
  });
});

describe("the grade export", () => {
  const latest = [
    {
      runId: "run-2",
      section: null,
      result: gradableResult({
        owner: "alice",
        labId: lab.id,
        gradedAt: "2030-01-01T10:00:00.000Z",
        checks: [
          checkResult({ checkId: "score", points: 1, maxPoints: 2, passed: false }),
          checkResult({ checkId: "lab", points: 3, maxPoints: 3 }),
          checkResult({ checkId: "removed-since", points: 9, maxPoints: 9 }),
        ],
        score: 4,
        maxScore: 5,
      }),
    },
    {
      runId: "run-1",
      section: null,
      result: ungradableResult({
        owner: "bob",
        labId: lab.id,
        maxScore: 5,
        gradedAt: "2030-01-01T09:00:00.000Z",
      }),
    },
  ];

  it("writes one CSV row per student, a column per check, and nothing as score when ungradable", () => {
    expect(toGradesCsv(lab, latest)).toBe(
      "student,lab,score,max,score (max 2),lab (max 3),graded at,run id\r\n" +
        "alice,linux-basics,4,5,1,3,2030-01-01T10:00:00.000Z,run-2\r\n" +
        "bob,linux-basics,,5,,,2030-01-01T09:00:00.000Z,run-1\r\n",
    );
  });

  it("writes the same rows as JSON, with the lab's checks", () => {
    expect(toLabGrades(lab, latest, "2030-01-02T00:00:00.000Z")).toEqual({
      labId: lab.id,
      exportedAt: "2030-01-02T00:00:00.000Z",
      maxScore: 5,
      checks: [
        { id: "score", title: "Check score", points: 2 },
        { id: "lab", title: "Check lab", points: 3 },
      ],
      students: [
        { student: "alice", runId: "run-2", result: latest[0]?.result },
        { student: "bob", runId: "run-1", result: latest[1]?.result },
      ],
    });
  });
});
