import type { UseQueryResult } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { SessionList } from "../../../../common/api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { useStartGradingRun } from "../api/grading-runs.ts";

/**
 * Instructors start a run over every running session of the lab, or over the ones they tick.
 * `sessions` is the lab's running sessions, to tick from.
 */
export function StartRunForm({
  lab,
  sessions,
  runInProgress,
  onStarted,
}: {
  lab: LocalizedLab;
  sessions: UseQueryResult<SessionList>;
  runInProgress: boolean;
  onStarted: (runId: string) => void;
}) {
  const { t } = useTranslation();
  const [scope, setScope] = useState<"all" | "selected">("all");
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const start = useStartGradingRun(lab.id);
  const running = sessions.data?.items ?? [];
  const chosen = running.filter((session) => selected.has(session.id)).map((session) => session.id);
  const canStart = !start.isPending && !runInProgress && (scope === "all" || chosen.length > 0);

  const toggle = (sessionId: string, on: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      if (on) next.add(sessionId);
      else next.delete(sessionId);
      return next;
    });

  return (
    <form
      className="panel grading-start"
      aria-labelledby="grading-start-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (!canStart) return;
        start.mutate(scope === "all" ? { kind: "start" } : { kind: "start", sessionIds: chosen }, {
          onSuccess: (run) => onStarted(run.id),
        });
      }}
    >
      <h2 id="grading-start-title" className="panel-title">
        {t("grading.start.title")}
      </h2>
      <fieldset className="grading-scope">
        <legend className="field-label">{t("grading.start.scope")}</legend>
        <label>
          <input type="radio" name="scope" checked={scope === "all"} onChange={() => setScope("all")} />{" "}
          {t("grading.start.everyRunning", { number: sessions.data ? running.length : "…" })}
        </label>
        <label>
          <input
            type="radio"
            name="scope"
            checked={scope === "selected"}
            onChange={() => setScope("selected")}
          />{" "}
          {t("grading.start.selected")}
        </label>
      </fieldset>
      {scope === "selected" &&
        (sessions.isPending ? (
          <p className="muted">{t("grading.start.loadingSessions")}</p>
        ) : running.length === 0 ? (
          <p className="empty">{t("grading.start.noneRunning")}</p>
        ) : (
          <fieldset className="grading-session-choice">
            <legend className="field-label">{t("grading.start.runningSessions")}</legend>
            {running.map((session) => (
              <label key={session.id} translate="no">
                <input
                  type="checkbox"
                  checked={selected.has(session.id)}
                  onChange={(event) => toggle(session.id, event.target.checked)}
                />{" "}
                {session.owner} <span className="muted small">{session.id}</span>
              </label>
            ))}
          </fieldset>
        ))}
      <div className="grading-actions">
        <button type="submit" className="button button-primary" disabled={!canStart}>
          {start.isPending ? t("grading.start.pending") : t("grading.start.button")}
        </button>
        {runInProgress && <p className="muted small">{t("grading.start.inProgress")}</p>}
      </div>
      {start.isError && (
        <p className="notice notice-error" role="alert">
          <ErrorText error={start.error} />
        </p>
      )}
    </form>
  );
}
