import { useId, useState } from "react";
import { Trans, useTranslation } from "react-i18next";
import type { Announcement } from "../../../../common/announcements-api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import { useDismissAnnouncement } from "../api/dismiss-announcement.ts";
import { useSessionAnnouncements } from "../api/get-session-announcements.ts";
import { newestArrival } from "../lib/arrivals.ts";
import "./announcements.css";

/**
 * What staff announced to this session's student, newest first, each until they dismiss it. For the
 * session's owner only (the BFF refuses anyone else). The message is shown as its author wrote it:
 * text, never markup; its own direction; never translated by us (a browser may offer to).
 */
export function AnnouncementBanners({ sessionId }: { sessionId: string }) {
  const { t } = useTranslation();
  const items = useSessionAnnouncements(sessionId).data?.items;
  const arrival = useArrival(items);
  return (
    <>
      {/* Apart from the list, so that a new one is read out once, not the whole list again. */}
      <p className="visually-hidden" role="status">
        {arrival && t("announcements.arrived", { author: arrival.author, text: arrival.text })}
      </p>
      {items && items.length > 0 && (
        <ul className="announcements" aria-label={t("announcements.label")}>
          {items.map((announcement) => (
            <li key={announcement.id}>
              <AnnouncementBanner sessionId={sessionId} announcement={announcement} />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** The newest announcement a poll brought since the page had its first list. */
function useArrival(items: readonly Announcement[] | undefined): Announcement | undefined {
  const [known, setKnown] = useState<ReadonlySet<string> | null>(null);
  const [seen, setSeen] = useState<readonly Announcement[] | undefined>(undefined);
  const [arrival, setArrival] = useState<Announcement | undefined>(undefined);
  // The query keeps the same list object while nothing changed, so this runs once per new list.
  if (items && items !== seen) {
    setSeen(items);
    const fresh = newestArrival(known, items);
    if (fresh) setArrival(fresh);
    setKnown(new Set([...(known ?? []), ...items.map((item) => item.id)]));
  }
  return arrival;
}

function AnnouncementBanner({ sessionId, announcement }: { sessionId: string; announcement: Announcement }) {
  const { t } = useTranslation();
  const format = useFormat();
  const dismiss = useDismissAnnouncement(sessionId);
  const textId = useId();
  return (
    <article className="announcement" data-testid="announcement">
      <div className="announcement-body">
        <p className="announcement-meta small">
          <Trans
            i18nKey="announcements.from"
            values={{ author: announcement.author, time: format.dateTime(announcement.createdAt) }}
            components={{ author: <span translate="no" /> }}
          />
        </p>
        <p id={textId} className="announcement-text" dir="auto">
          {announcement.text}
        </p>
        {dismiss.isError && (
          <p className="notice notice-error" role="alert">
            <ErrorText error={dismiss.error} />
          </p>
        )}
      </div>
      <button
        type="button"
        className="button"
        aria-describedby={textId}
        disabled={dismiss.isPending}
        onClick={() => dismiss.mutate(announcement.id)}
      >
        {t("announcements.dismiss")}
      </button>
    </article>
  );
}
