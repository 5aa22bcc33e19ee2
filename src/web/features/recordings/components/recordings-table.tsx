import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import type { RecordingSummary } from "../../../../common/api.ts";
import { graphicalConsole } from "../../../../common/console-protocol.ts";
import { LangText } from "../../../components/lang-text.tsx";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import { paths } from "../../../lib/paths.ts";
import { recordingFileName, recordingFileUrl } from "../api/recording-url.ts";
import { formatSize } from "../lib/format-size.ts";

/**
 * Recordings as the BFF lists them, newest first. The student column is for staff: a student's list
 * holds only their own. Its first cell names the row: the student, or else the lab.
 */
export function RecordingsTable({
  recordings,
  label,
  showStudent,
  labTitle,
  busy,
}: {
  recordings: RecordingSummary[];
  label: string;
  showStudent: boolean;
  labTitle: (labId: string) => LocalText;
  busy: boolean;
}) {
  const { t } = useTranslation();
  const format = useFormat();
  const LabCell = showStudent ? "td" : "th";
  return (
    <div className="table-scroll">
      <table className="table" aria-label={label} aria-busy={busy}>
        <thead>
          <tr>
            {showStudent && <th scope="col">{t("recordings.list.table.student")}</th>}
            <th scope="col">{t("recordings.list.table.lab")}</th>
            <th scope="col">{t("recordings.list.table.session")}</th>
            <th scope="col">{t("recordings.list.table.started")}</th>
            <th scope="col">{t("recordings.list.table.lastWritten")}</th>
            <th scope="col">{t("recordings.list.table.size")}</th>
            <th scope="col">{t("recordings.list.table.actions")}</th>
          </tr>
        </thead>
        <tbody>
          {recordings.map((recording) => (
            <tr
              key={`${recording.sessionId}/${recording.terminal ?? 0}`}
              data-session={recording.sessionId}
              data-terminal={recording.terminal}
            >
              {showStudent && (
                <th scope="row" translate="no">
                  {recording.owner}
                </th>
              )}
              <LabCell scope={showStudent ? undefined : "row"}>
                <LangText text={labTitle(recording.labId)} />
              </LabCell>
              <td>
                <code translate="no">{recording.sessionId}</code>
                {recording.terminal === graphicalConsole ? (
                  <> · {t("recordings.screen")}</>
                ) : (
                  recording.terminal !== undefined && (
                    <> · {t("console.tabs.terminal", { number: recording.terminal })}</>
                  )
                )}
              </td>
              <td>
                <time dateTime={recording.startedAt}>{format.dateTime(recording.startedAt)}</time>
              </td>
              <td>
                <time dateTime={recording.lastWrittenAt}>{format.dateTime(recording.lastWrittenAt)}</time>
              </td>
              <td>{formatSize(recording.bytes, format.locale)}</td>
              <td>
                <span className="recording-links">
                  <Link to={paths.recording.to(recording.sessionId, recording.terminal)}>
                    {t("recordings.list.replay")}
                  </Link>
                  <a
                    href={recordingFileUrl(recording.sessionId, recording.terminal)}
                    download={recordingFileName(recording.sessionId, recording.terminal)}
                  >
                    {t("recordings.list.download")}
                  </a>
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
