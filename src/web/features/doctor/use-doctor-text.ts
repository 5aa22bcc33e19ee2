// Says a doctor's sentence (common/doctor-texts.ts) in the page's language, from doctor.texts.* of
// the catalogs. A sentence this page does not know, from a newer BFF, is said as the BFF wrote it.
import { useTranslation } from "react-i18next";
import { doctorTexts, renderDoctorText, type DoctorText } from "../../../common/doctor-texts.ts";
import { isOneOf } from "../../../common/error-reasons.ts";

const knownKeys = Object.keys(doctorTexts) as (keyof typeof doctorTexts)[];

export function useDoctorText(): (text: DoctorText, english: string) => string {
  const { t } = useTranslation();
  // The words with their {{params}} left in: renderDoctorText fills them, saying nested sentences too.
  const template = (key: string) =>
    isOneOf(knownKeys, key) ? t(`doctor.texts.${key}`, { skipInterpolation: true }) : undefined;
  return (text, english) => (isOneOf(knownKeys, text.key) ? renderDoctorText(text, template) : english);
}
