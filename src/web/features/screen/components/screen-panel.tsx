import { lazy, Suspense } from "react";
import { useTranslation } from "react-i18next";
import { Loading } from "../../../components/page-state.tsx";
import type { ScreenViewProps } from "./screen-view.tsx";

// noVNC is most of the screen's weight: it loads only when a screen opens.
const ScreenView = lazy(() => import("./screen-view.tsx"));

/** A session's screen (its VM's graphical console): the owner types, staff observe. */
export function ScreenPanel(props: ScreenViewProps) {
  const { t } = useTranslation();
  return (
    <Suspense fallback={<Loading label={t("screen.loading")} />}>
      <ScreenView {...props} />
    </Suspense>
  );
}
