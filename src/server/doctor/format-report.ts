// The doctor's report as text for a terminal: one block per check, the fix indented below it.
import type { DoctorReport, DoctorStatus } from "../../common/operations-api.ts";

const marks: Record<DoctorStatus, string> = { ok: "ok  ", warn: "WARN", fail: "FAIL" };

export function formatReport(report: DoctorReport, target: string): string {
  const lines = [`Lab Console doctor: ${target}`, ""];
  for (const check of report.checks) {
    lines.push(`[${marks[check.status]}] ${check.title}`, `       ${check.summary}`);
    if (check.status !== "ok") {
      for (const detail of check.details) lines.push(`       - ${detail}`);
      if (check.fix) {
        lines.push("       Fix:");
        for (const line of check.fix.split("\n")) lines.push(`         ${line}`);
      }
    }
    lines.push("");
  }
  const counts = (["fail", "warn", "ok"] as const).map(
    (status) => `${report.checks.filter((check) => check.status === status).length} ${status}`,
  );
  lines.push(`${counts.join(", ")}.`);
  return lines.join("\n");
}
