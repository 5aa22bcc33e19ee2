import { useId } from "react";
import { useTranslation } from "react-i18next";
import { languageInfo } from "../../../lib/i18n/languages.ts";
import { useLabs } from "../api/get-labs.ts";

/** The "Lab" filter of the staff's lists: every lab by its title, or "" for all labs. */
export function LabSelect({ value, onChange }: { value: string; onChange: (labId: string) => void }) {
  const { t } = useTranslation();
  const labs = useLabs();
  // The label points at the select by id: wrapped around it, it would also take in the option texts.
  const id = useId();
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {t("sessions.filters.lab")}
      </label>
      <select id={id} value={value} onChange={(event) => onChange(event.target.value)}>
        <option value="">{t("sessions.filters.allLabs")}</option>
        {labs.data?.map((lab) => (
          <option key={lab.id} value={lab.id} lang={languageInfo[lab.title.lang].tag}>
            {lab.title.text}
          </option>
        ))}
      </select>
    </div>
  );
}
