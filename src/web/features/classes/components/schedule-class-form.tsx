import { useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { maxExpectedStudents } from "../../../../common/classes-api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { useScheduleClass } from "../api/change-classes.ts";

/** `<input type="datetime-local">` speaks local wall-clock time without a zone; the API wants an instant. */
function toInstant(local: string): string {
  return new Date(local).toISOString();
}

function localInput(date: Date): string {
  const shifted = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return shifted.toISOString().slice(0, 16);
}

/** An instructor schedules a class: the pool boots its VMs ahead of the start. */
export function ScheduleClassForm({ labs }: { labs: LocalizedLab[] }) {
  const { t } = useTranslation();
  const schedule = useScheduleClass();
  const ids = { lab: useId(), expected: useId(), heading: useId() };
  const nextHour = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000);
  const [labId, setLabId] = useState("");
  const [start, setStart] = useState(localInput(nextHour));
  const [end, setEnd] = useState(localInput(new Date(nextHour.getTime() + 2 * 3_600_000)));
  const [expected, setExpected] = useState("30");
  const chosenLab = labId || labs[0]?.id || "";

  return (
    <section className="section" aria-labelledby={ids.heading}>
      <h2 id={ids.heading} className="section-title">
        {t("classes.schedule.title")}
      </h2>
      <p className="muted small">{t("classes.schedule.lead")}</p>
      <form
        className="classes-form"
        onSubmit={(event) => {
          event.preventDefault();
          schedule.mutate({
            labId: chosenLab,
            startsAt: toInstant(start),
            endsAt: toInstant(end),
            expected: Number(expected),
          });
        }}
      >
        <div className="field">
          <label className="field-label" htmlFor={ids.lab}>
            {t("classes.schedule.lab")}
          </label>
          <select id={ids.lab} value={chosenLab} required onChange={(event) => setLabId(event.target.value)}>
            {labs.map((lab) => (
              <option key={lab.id} value={lab.id}>
                {lab.title.text}
              </option>
            ))}
          </select>
        </div>
        <TimeField label={t("classes.schedule.start")} value={start} onChange={setStart} />
        <TimeField label={t("classes.schedule.end")} value={end} onChange={setEnd} />
        <div className="field">
          <label className="field-label" htmlFor={ids.expected}>
            {t("classes.schedule.expected")}
          </label>
          <input
            id={ids.expected}
            type="number"
            inputMode="numeric"
            min={1}
            max={maxExpectedStudents}
            required
            value={expected}
            onChange={(event) => setExpected(event.target.value)}
          />
        </div>
        <button type="submit" className="button button-primary" disabled={schedule.isPending || !chosenLab}>
          {schedule.isPending ? t("classes.schedule.pending") : t("classes.schedule.submit")}
        </button>
      </form>
      <div aria-live="polite">
        {schedule.isSuccess && <p className="notice">{t("classes.schedule.done")}</p>}
        {schedule.isError && (
          <p className="notice notice-error" role="alert">
            <ErrorText error={schedule.error} />
          </p>
        )}
      </div>
    </section>
  );
}

/** A moment in the reader's own time zone, to the minute. */
function TimeField({
  label,
  value,
  onChange,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <input
        id={id}
        type="datetime-local"
        required
        value={value}
        onChange={(event) => onChange(event.target.value)}
      />
    </div>
  );
}
