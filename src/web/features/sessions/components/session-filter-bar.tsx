import { useEffect, useId, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { sessionStatuses, type SessionStatus } from "../../../../common/api.ts";
import { SelectField } from "../../../components/select-field.tsx";

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
  const studentId = useId();
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
      <SelectField
        label={t("sessions.filters.status")}
        anyLabel={t("sessions.filters.anyStatus")}
        value={values.status}
        options={sessionStatuses.map((status) => ({ value: status, label: t(`sessions.status.${status}`) }))}
        onChange={(status) => onChange({ status })}
      />
      <div className="field">
        <label className="field-label" htmlFor={studentId}>
          {t("sessions.filters.student")}
        </label>
        <input
          id={studentId}
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
