import { useId } from "react";

export interface SelectOption<Value extends string> {
  value: Value;
  label: string;
  /** Names and codes (a section, a student) that a page translator must leave alone. */
  untranslated?: boolean;
}

/**
 * A labelled select. The label points at it by id: one wrapped around a <select> would also take in
 * the option texts, and "Status" would no longer name the status filter. `anyLabel` adds a first option, the empty value, for a filter that keeps
 * everything.
 */
export function SelectField<Value extends string>({
  label,
  value,
  options,
  anyLabel,
  onChange,
  className,
}: {
  label: string;
  value: Value | "";
  options: readonly SelectOption<Value>[];
  anyLabel?: string;
  onChange: (value: Value | "") => void;
  className?: string;
}) {
  const id = useId();
  return (
    <div className={className ? `field ${className}` : "field"}>
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <select id={id} value={value} onChange={(event) => onChange(event.target.value as Value | "")}>
        {anyLabel !== undefined && <option value="">{anyLabel}</option>}
        {options.map((option) => (
          <option key={option.value} value={option.value} translate={option.untranslated ? "no" : undefined}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}
