import { useId, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { sessionStatuses, type SessionStatus } from "../../../../common/api.ts";
import { SelectField } from "../../../components/select-field.tsx";
import { useTypedValue } from "../../../lib/typed-value.ts";

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
  const [student, setStudent] = useTypedValue(values.student, (typed) => onChange({ student: typed }), {
    delayMs: studentTypingDelayMs,
    trim: true,
  });

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
