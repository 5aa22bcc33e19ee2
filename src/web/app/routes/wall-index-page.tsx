// /wall: the labs, each a link to its class wall (where announcements are sent).
import { useTranslation } from "react-i18next";
import { paths } from "../../lib/paths.ts";
import { LabIndex } from "./lab-index.tsx";

/** Staff pick the lab whose class wall to watch. */
export function WallIndexPage() {
  const { t } = useTranslation();
  return (
    <LabIndex
      title={t("wall.index.title")}
      lead={t("wall.index.lead")}
      linkTo={(labId) => paths.labWall.to(labId)}
    />
  );
}
