import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { LangText } from "../../../components/lang-text.tsx";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { LabDescription } from "./lab-description.tsx";
import { labPoints } from "../../../../common/lab.ts";

/** One lab in the catalog; `action` is what the person can do with it (launch, or go to their session). */
export function LabCard({ lab, action }: { lab: LocalizedLab; action: ReactNode }) {
  const { t } = useTranslation();
  const format = useFormat();
  const titleId = `lab-${lab.id}-title`;
  const points = labPoints(lab);
  return (
    <article className="card lab-card" aria-labelledby={titleId}>
      <h3 id={titleId} className="card-title">
        <LangText text={lab.title} />
      </h3>
      <LabDescription source={lab.description} headingLevel={4} />
      <ul className="lab-facts" aria-label={t("labs.card.facts")}>
        <li>{format.coarse(lab.session.minutes * 60_000)}</li>
        <li>{t("labs.card.vm", { cpu: lab.vm.cpu, memory: lab.vm.memory })}</li>
        {lab.checks.length > 0 && <li>{t("labs.card.checks", { count: lab.checks.length, points })}</li>}
      </ul>
      <div className="card-actions">{action}</div>
    </article>
  );
}
