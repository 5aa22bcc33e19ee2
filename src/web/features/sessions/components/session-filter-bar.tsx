import { useEffect, useId, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { sessionStatuses, type SessionStatus } from "../../../../common/api.ts";

export interface SessionFilterValues {
  lab: string;
  status: SessionStatus | "";
  student: string;
}

const studentTypingDelayMs = 300;

/**
 * Lab, status and student filters. The student box waits for a pause in typing before it filters.
 * `labFilter` is the lab field, from the labs feature, bound by the page to `values.lab`.
 */
export function SessionFilterBar({
  values,
  labFilter,
  onChange,
}: {
  values: SessionFilterValues;
  labFilter: ReactNode;
  onChange: (changes: Partial<SessionFilterValues>) => void;
}) {
  const { t } = useTranslation();
  // Labels point at their controls with ids: a label wrapped around a <select> would also take in the
  // option texts, and "Status" would no longer name the status filter.
  const ids = { status: useId(), student: useId() };
  const [student, setStudent] = useState(values.student);

  // Follow outside changes (back button, a cleared filter) without fighting the person typing.
  const [lastOutsideStudent, setLastOutsideStudent] = useState(values.student);
  if (values.student !== lastOutsideStudent) {
    setLastOutsideStudent(values.student);
    setStudent(values.student);
  }

  useEffect(() => {
    if (student.trim() === values.student) return;
    const timer = setTimeout(() => onChange({ student: student.trim() }), studentTypingDelayMs);
    return () => clearTimeout(timer);
  }, [student, values.student, onChange]);

  return (
    <form
      className="filters"
      role="search"
      aria-label={t("sessions.filters.label")}
      onSubmit={(event) => event.preventDefault()}
    >
      {labFilter}
      <div className="field">
        <label className="field-label" htmlFor={ids.status}>
          {t("sessions.filters.status")}
        </label>
        <select
          id={ids.status}
          value={values.status}
          onChange={(event) => onChange({ status: event.target.value as SessionStatus | "" })}
        >
          <option value="">{t("sessions.filters.anyStatus")}</option>
          {sessionStatuses.map((status) => (
            <option key={status} value={status}>
              {t(`sessions.status.${status}`)}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label className="field-label" htmlFor={ids.student}>
          {t("sessions.filters.student")}
        </label>
        <input
          id={ids.student}
          type="search"
          placeholder={t("sessions.filters.exactUsername")}
          autoComplete="off"
          value={student}
          onChange={(event) => setStudent(event.target.value)}
        />
      </div>
    </form>
  );
}
