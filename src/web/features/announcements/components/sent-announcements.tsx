import { useId } from "react";
import { Trans, useTranslation } from "react-i18next";
import type { Announcement } from "../../../../common/announcements-api.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import { useLabAnnouncements } from "../api/get-lab-announcements.ts";

/** What staff announced in the lab, newest first: who, to whom, when, and the words as sent. */
export function SentAnnouncements({ labId }: { labId: string }) {
  const { t } = useTranslation();
  const query = useLabAnnouncements(labId);
  const headingId = useId();
  const items = query.data?.items;
  return (
    <section className="section" aria-labelledby={headingId}>
      <h3 id={headingId} className="section-title">
        {t("announcements.sent.title")}
      </h3>
      {query.isPending ? (
        <Loading label={t("announcements.sent.loading")} />
      ) : !items ? (
        <ErrorPanel
          title={t("announcements.sent.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : items.length === 0 ? (
        <p className="muted">{t("announcements.sent.none")}</p>
      ) : (
        <>
          <RefreshWarning error={query.error} />
          <ul className="sent-announcements" aria-labelledby={headingId}>
            {items.map((announcement) => (
              <li key={announcement.id} data-testid="sent-announcement">
                <SentMeta announcement={announcement} />
                <span className="announcement-text" dir="auto">
                  {announcement.text}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function SentMeta({ announcement }: { announcement: Announcement }) {
  const format = useFormat();
  const values = {
    author: announcement.author,
    section: announcement.section ?? "",
    time: format.dateTime(announcement.createdAt),
  };
  return (
    <span className="muted small">
      <Trans
        i18nKey={
          announcement.section === null ? "announcements.sent.toWholeLab" : "announcements.sent.toSection"
        }
        values={values}
        components={{ author: <span translate="no" /> }}
      />
    </span>
  );
}
