import { useId } from "react";

/**
 * A labelled text filter that applies on Enter or when focus leaves it, not on every key: each applied
 * value is a new query (and a new URL). A new `value` from outside (back button, cleared filter)
 * replaces what is in the box.
 */
export function FilterTextField({
  label,
  placeholder,
  value,
  onApply,
}: {
  label: string;
  placeholder: string;
  value: string;
  onApply: (value: string) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <input
        id={id}
        type="search"
        placeholder={placeholder}
        autoComplete="off"
        key={value}
        defaultValue={value}
        onBlur={(event) => onApply(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter") onApply(event.currentTarget.value);
        }}
      />
    </div>
  );
}
