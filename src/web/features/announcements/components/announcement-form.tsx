import { useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { announcementMaxLength } from "../../../../common/announcements-api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { SelectField } from "../../../components/select-field.tsx";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";
import { useSendAnnouncement } from "../api/send-announcement.ts";
import { audienceChoices } from "../lib/audiences.ts";
import { SentAnnouncements } from "./sent-announcements.tsx";
import "./announcements.css";

/** The select's value for the whole lab: section names are never empty. */
const wholeLab = "";

/**
 * Staff send a message to every student of the lab, or of one section; below it, what was sent.
 * `sections`: the sections the page knows of (its sessions'); with none, the choice is not shown and
 * the message goes to the whole lab.
 */
export function AnnouncementForm({ labId, sections }: { labId: string; sections: string[] }) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const send = useSendAnnouncement(labId);
  const ids = { heading: useId(), text: useId(), length: useId() };
  const [text, setText] = useState("");
  const [picked, setPicked] = useState(wholeLab);
  const choices = audienceChoices(me, sections).map((choice) => choice ?? wholeLab);
  // What was picked may have left the page (its sessions ended): the first choice then.
  const audience = choices.includes(picked) ? picked : (choices[0] ?? wholeLab);

  return (
    <section className="section announcement-form" aria-labelledby={ids.heading}>
      <h2 id={ids.heading} className="section-title">
        {t("announcements.form.title")}
      </h2>
      <p className="muted small">{t("announcements.form.lead")}</p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          send.mutate(
            { text, section: audience === wholeLab ? null : audience },
            { onSuccess: () => setText("") },
          );
        }}
      >
        <div className="field">
          <label className="field-label" htmlFor={ids.text}>
            {t("announcements.form.text")}
          </label>
          <textarea
            id={ids.text}
            dir="auto"
            required
            maxLength={announcementMaxLength}
            aria-describedby={ids.length}
            placeholder={t("announcements.form.placeholder")}
            value={text}
            onChange={(event) => setText(event.target.value)}
          />
          <span id={ids.length} className="muted small">
            {t("announcements.form.length", { length: text.length, max: announcementMaxLength })}
          </span>
        </div>
        {(choices.length > 1 || choices[0] !== wholeLab) && (
          <SelectField
            label={t("announcements.form.audience")}
            value={audience}
            options={choices.map((choice) => ({
              value: choice,
              label:
                choice === wholeLab
                  ? t("announcements.form.wholeLab")
                  : t("announcements.form.section", { section: choice }),
            }))}
            onChange={setPicked}
          />
        )}
        <button
          type="submit"
          className="button button-primary"
          disabled={send.isPending || text.trim() === ""}
        >
          {send.isPending ? t("announcements.form.pending") : t("announcements.form.submit")}
        </button>
      </form>
      <div aria-live="polite">
        {send.isSuccess && <p className="notice">{t("announcements.form.sent")}</p>}
        {send.isError && (
          <p className="notice notice-error" role="alert">
            <ErrorText error={send.error} />
          </p>
        )}
      </div>
      <SentAnnouncements labId={labId} />
    </section>
  );
}
