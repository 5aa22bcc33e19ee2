import { Trans, useTranslation } from "react-i18next";
import { Link } from "react-router";
import type { Session } from "../../../../common/api.ts";
import { Elapsed, TimeLeft } from "../../../components/duration.tsx";
import { LangText } from "../../../components/lang-text.tsx";
import { useLanguage } from "../../../lib/i18n/use-language.ts";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import { useLabSetup } from "../api/get-boot-log.ts";
import { runningSince, type LabSetup } from "../lib/lab-setup.ts";
import { sessionNoticeText } from "../lib/session-notice.ts";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { paths } from "../../../lib/paths.ts";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";
import { EndSessionButton } from "./end-session-button.tsx";
import { RestartSessionButton } from "./restart-session-button.tsx";
import { ExpiryWarning } from "./expiry-warning.tsx";
import { IdleNotice } from "./idle-notice.tsx";
import { ExtendSessionButton } from "./extend-session-button.tsx";
import { currentStep, SessionTimeline } from "./session-timeline.tsx";
import { StatusBadge } from "./status-badge.tsx";

/**
 * A student's view of one session: where its VM is, how long it has left, and how to end it. `lab` is
 * the session's lab from the catalog, undefined until it is in.
 */
export function SessionCard({
  session,
  lab,
  labTitle,
  headingLevel = 3,
  showOpenLink = true,
  onEnded,
}: {
  session: Session;
  lab: LocalizedLab | undefined;
  labTitle: LocalText;
  headingLevel?: 2 | 3;
  showOpenLink?: boolean;
  onEnded?: () => void;
}) {
  const { t } = useTranslation();
  const Heading = headingLevel === 2 ? "h2" : "h3";
  const titleId = `session-${session.id}-title`;
  const live = session.status === "starting" || session.status === "running";
  const me = useSignedInUser();
  const { language } = useLanguage();
  const notice = sessionNoticeText(session, t, language);
  const setup = useLabSetup(session);

  return (
    <article className="card session-card" aria-labelledby={titleId} data-status={session.status}>
      <header className="session-card-header">
        <Heading id={titleId} className="card-title">
          <LangText text={labTitle} />
        </Heading>
        <StatusBadge status={session.status} />
      </header>
      <ProgressAnnouncement session={session} setup={setup} labTitle={labTitle} />

      <p className="session-summary">
        <SessionSummary session={session} />
      </p>

      {live && <SessionTimeline session={session} setup={setup} />}
      {session.status === "starting" && session.start === "cold" && (
        <p className="muted small">{t("sessions.card.startHint")}</p>
      )}
      {setup.state === "running" && (
        <p className="muted small" data-testid="setup-hint">
          {t("sessions.card.setupHint")}
        </p>
      )}
      {live && session.start === "warm" && (
        <p className="muted small" data-start="warm">
          {t("sessions.card.startedWarm")}
        </p>
      )}

      {live && <ExpiryWarning session={session} own={session.owner === me.username} />}
      {live && <IdleNotice session={session} />}

      {notice && (
        <p className={`notice ${session.status === "failed" ? "notice-error" : "notice-warning"}`}>
          <LangText text={notice} />
        </p>
      )}

      <div className="card-actions">
        {showOpenLink && (
          <Link className="button" to={paths.session.to(session.id)}>
            {t("sessions.card.open")}
          </Link>
        )}
        {live && <ExtendSessionButton session={session} lab={lab} />}
        {session.status === "running" && <RestartSessionButton session={session} />}
        {session.status !== "stopping" && (
          <EndSessionButton session={session} labTitle={labTitle} onEnded={onEnded} />
        )}
      </div>
    </article>
  );
}

/**
 * Launch progress for screen readers: the start-up step while the VM starts, then its status. Only
 * changes are read out (not the card as it first appears, nor the ticking clocks).
 */
function ProgressAnnouncement({
  session,
  setup,
  labTitle,
}: {
  session: Session;
  setup: LabSetup;
  labTitle: LocalText;
}) {
  const { t } = useTranslation();
  const step =
    session.status === "starting"
      ? t(`sessions.phase.${currentStep(session)}`)
      : setup.state === "running"
        ? t("sessions.timeline.settingUp")
        : t(`sessions.status.${session.status}`);
  return (
    <p className="visually-hidden" role="status">
      {t("sessions.card.progress", { lab: labTitle.text, step })}
    </p>
  );
}

function SessionSummary({ session }: { session: Session }) {
  const { t } = useTranslation();
  switch (session.status) {
    case "starting":
      return (
        <Trans
          i18nKey="sessions.card.starting"
          components={{ elapsed: <Elapsed since={session.createdAt} /> }}
        />
      );
    case "running":
      return (
        <Trans
          i18nKey="sessions.card.running"
          components={{
            elapsed: <Elapsed since={runningSince(session)} format="coarse" />,
            left: <TimeLeft until={session.expiresAt} />,
          }}
        />
      );
    case "stopping":
      return t("sessions.card.stopping");
    case "failed":
      return t("sessions.card.failed");
  }
}
