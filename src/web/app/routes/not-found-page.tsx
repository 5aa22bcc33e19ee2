// Any address no route matches, inside the signed-in layout.
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { paths } from "../../lib/paths.ts";

export function NotFoundPage() {
  const { t } = useTranslation();
  return (
    <main className="page">
      <title>{t("app.pageTitle", { page: t("notFound.title") })}</title>
      <div className="panel" role="alert">
        <h1 className="panel-title">{t("notFound.heading")}</h1>
        <p>{t("notFound.body")}</p>
        <Link to={paths.home.to()}>{t("notFound.home")}</Link>
      </div>
    </main>
  );
}
