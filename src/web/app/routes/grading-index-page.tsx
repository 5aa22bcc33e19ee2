// /grading: the labs, each a link to its grading page.
import { useTranslation } from "react-i18next";
import { paths } from "../../lib/paths.ts";
import { LabIndex } from "./lab-index.tsx";
import { labPoints } from "../../../common/lab.ts";

/** Staff pick the lab to grade. */
export function GradingIndexPage() {
  const { t } = useTranslation();
  return (
    <LabIndex
      title={t("grading.index.title")}
      lead={t("grading.index.lead")}
      linkTo={paths.labGrading.to}
      summary={(lab) =>
        t("grading.index.summary", {
          count: lab.checks.length,
          points: labPoints(lab),
        })
      }
    />
  );
}
