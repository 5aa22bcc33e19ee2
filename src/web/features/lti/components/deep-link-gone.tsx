import { Trans, useTranslation } from "react-i18next";

/** A deep-linking request that timed out or was answered already: only the LMS can start a new one. */
export function DeepLinkGone({ platformName }: { platformName?: string }) {
  const { t } = useTranslation();
  return (
    <div className="panel panel-error" role="alert">
      <h2 className="panel-title">{t("lti.deepLink.gone.title")}</h2>
      <p>
        {platformName ? (
          <Trans
            i18nKey="lti.deepLink.gone.startAgainIn"
            components={{ platform: <span translate="no">{platformName}</span> }}
          />
        ) : (
          t("lti.deepLink.gone.startAgain")
        )}
      </p>
    </div>
  );
}
