// The grade export: one row per student (their latest result) as CSV or JSON.
import type { LabGrades } from "../../common/grading-api.ts";
import { type Lab, labPoints } from "../../common/lab.ts";
import type { LatestResult } from "./repository.ts";

export function toLabGrades(lab: Lab, latest: readonly LatestResult[], exportedAt: string): LabGrades {
  return {
    labId: lab.id,
    exportedAt,
    maxScore: labPoints(lab),
    checks: lab.checks.map((check) => ({ id: check.id, title: check.title, points: check.points })),
    students: latest.map(({ runId, result }) => ({ student: result.owner, runId, result })),
  };
}

/**
 * Columns: student, lab, score, max, one per check (points earned), graded at, run id. An
 * ungradable result leaves score and checks empty: no score is not the same as zero.
 */
export function toGradesCsv(lab: Lab, latest: readonly LatestResult[]): string {
  // Check ids may be "score" or "lab"; the maximum in the header keeps them apart from the fixed columns.
  const header = [
    "student",
    "lab",
    "score",
    "max",
    ...lab.checks.map((c) => `${c.id} (max ${c.points})`),
    "graded at",
    "run id",
  ];
  const rows = latest.map(({ runId, result }) => {
    const pointsByCheck = new Map(result.checks.map((check) => [check.checkId, check.points]));
    return [
      result.owner,
      lab.id,
      result.score ?? "",
      result.maxScore,
      ...lab.checks.map((check) => (result.gradable ? (pointsByCheck.get(check.id) ?? "") : "")),
      result.gradedAt,
      runId,
    ];
  });
  return [header, ...rows].map((row) => row.map(csvCell).join(",") + "\r\n").join("");
}

/**
 * RFC 4180 quoting, and a quote mark in front of text a spreadsheet would run as a formula
 * (OWASP "CSV injection"): a student named "=HYPERLINK(...)" stays a name.
 */
export function csvCell(value: string | number): string {
  if (typeof value === "number") return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
