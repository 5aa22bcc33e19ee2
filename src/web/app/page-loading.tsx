import { useTranslation } from "react-i18next";
import { Loading } from "../components/page-state.tsx";

/** A page whose code is still loading, in place of the page. */
export function PageLoading() {
  const { t } = useTranslation();
  return <Loading label={t("app.loadingPage")} />;
}
