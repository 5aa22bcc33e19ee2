import { useTranslation } from "react-i18next";
import type { Session } from "../../../../common/api.ts";
import { Elapsed } from "../../../components/duration.tsx";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import { runningSince, type LabSetup } from "../lib/lab-setup.ts";

// The VMI phases a start goes through, in order, as KubeVirt names them.
const steps = ["Pending", "Scheduling", "Scheduled", "Running"] as const;

type StepState = "done" | "current" | "upcoming";

/**
 * Where a VM start has got to, with the seconds each step took and a ticking clock on the current one,
 * so a 20-second start reads as progress rather than a hang. After Running comes the lab's set-up,
 * when there is a way to tell when it ends (lib/lab-setup.ts).
 */
export function SessionTimeline({ session, setup }: { session: Session; setup: LabSetup }) {
  const { t } = useTranslation();
  const format = useFormat();
  const current = currentStepIndex(session);
  const createdAt = Date.parse(session.createdAt);

  return (
    <ol className="timeline" aria-label={t("sessions.timeline.label")}>
      {steps.map((step, index) => {
        const state: StepState =
          index < current || (index === current && step === "Running")
            ? "done"
            : index === current
              ? "current"
              : "upcoming";
        const reachedAt = session.timeline.find((entry) => entry.phase === step)?.at;
        return (
          <li
            key={step}
            className="timeline-step"
            data-step={step}
            data-state={state}
            aria-current={state === "current" ? "step" : undefined}
          >
            <span className="timeline-marker" aria-hidden="true" />
            <span className="timeline-name">{t(`sessions.phase.${step}`)}</span>
            <span className="timeline-time">
              {state === "current" ? (
                <Elapsed since={reachedAt ?? session.createdAt} />
              ) : state === "done" && reachedAt ? (
                t("sessions.timeline.after", { duration: format.elapsed(Date.parse(reachedAt) - createdAt) })
              ) : null}
            </span>
          </li>
        );
      })}
      {setup.state !== "unknown" && <SetupStep session={session} setup={setup} />}
    </ol>
  );
}

function SetupStep({ session, setup }: { session: Session; setup: LabSetup }) {
  const { t } = useTranslation();
  const format = useFormat();
  const state: StepState =
    setup.state === "finished" ? "done" : setup.state === "running" ? "current" : "upcoming";
  return (
    <li
      className="timeline-step"
      data-step="Setup"
      data-state={state}
      aria-current={state === "current" ? "step" : undefined}
    >
      <span className="timeline-marker" aria-hidden="true" />
      <span className="timeline-name">
        {state === "current" ? t("sessions.timeline.settingUp") : t("sessions.timeline.setUp")}
      </span>
      <span className="timeline-time">
        {setup.state === "running" ? (
          <Elapsed since={runningSince(session)} />
        ) : setup.state === "finished" && setup.at ? (
          t("sessions.timeline.after", {
            duration: format.elapsed(Math.max(0, Date.parse(setup.at) - Date.parse(session.createdAt))),
          })
        ) : null}
      </span>
    </li>
  );
}

/** The step a start has reached, as KubeVirt names it. */
export function currentStep(session: Session): (typeof steps)[number] {
  return steps[currentStepIndex(session)] ?? "Pending";
}

function currentStepIndex(session: Session): number {
  if (session.status === "running") return steps.length - 1;
  const byPhase = steps.indexOf(session.phase as (typeof steps)[number]);
  if (byPhase >= 0) return byPhase;
  // No VMI yet (phase ""): the VM exists and waits for its instance, which is the Pending step.
  return 0;
}
