// /lti/deep-links/:requestId: an instructor chose "add content" in an LMS course and picks Lab
// Console's labs for it; the LMS gets them back signed. Often inside the LMS's frame, without Lab
// Console's cookie: the page asks only what the request's id opens (features/lti/api/deep-links.ts).
import { Trans, useTranslation } from "react-i18next";
import { useParams } from "react-router";
import { ErrorPanel, Loading } from "../../components/page-state.tsx";
import { LabDescription } from "../../features/labs/components/lab-description.tsx";
import { isDeepLinkGone, useLtiDeepLink } from "../../features/lti/api/deep-links.ts";
import { DeepLinkGone } from "../../features/lti/components/deep-link-gone.tsx";
import { DeepLinkPicker } from "../../features/lti/components/deep-link-picker.tsx";
import "../../features/lti/lti.css";

export function DeepLinkPage() {
  const { t } = useTranslation();
  const { requestId = "" } = useParams();
  const query = useLtiDeepLink(requestId);
  const request = query.data;
  return (
    <main className="page lti-page">
      <title>{t("app.pageTitle", { page: t("lti.deepLink.title") })}</title>
      {request ? (
        <>
          <h1 className="page-title">
            {request.courseTitle ? (
              <Trans
                i18nKey="lti.deepLink.heading"
                components={{
                  course: <span translate="no">{request.courseTitle}</span>,
                  platform: <span translate="no">{request.platformName}</span>,
                }}
              />
            ) : (
              <Trans
                i18nKey="lti.deepLink.headingNoCourse"
                components={{ platform: <span translate="no">{request.platformName}</span> }}
              />
            )}
          </h1>
          <p className="lead">{t("lti.deepLink.lead")}</p>
          <DeepLinkPicker
            request={request}
            renderDescription={(description) => <LabDescription source={description} headingLevel={3} />}
          />
        </>
      ) : (
        <>
          <h1 className="page-title">{t("lti.deepLink.title")}</h1>
          {query.isPending ? (
            <Loading label={t("lti.deepLink.loading")} />
          ) : isDeepLinkGone(query.error) ? (
            <DeepLinkGone />
          ) : (
            <ErrorPanel
              title={t("lti.deepLink.loadFailed")}
              error={query.error}
              onRetry={() => void query.refetch()}
            />
          )}
        </>
      )}
    </main>
  );
}
