import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { LtiPlatform } from "../../../../common/lti-api.ts";
import { ConfirmDialog } from "../../../components/confirm-dialog.tsx";
import { ErrorText } from "../../../components/error-text.tsx";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { useApproveLtiPlatform, useLtiPlatforms } from "../api/get-platforms.ts";

/** The LMSs Lab Console trusts for launches, and the self-registered ones waiting for approval. */
export function PlatformsSection() {
  const { t } = useTranslation();
  const query = useLtiPlatforms();
  const platforms = query.data?.items;
  return (
    <section className="section" aria-labelledby="lti-platforms-title">
      <h2 id="lti-platforms-title" className="section-title">
        {t("lti.platforms.title")}
      </h2>
      {query.isPending ? (
        <Loading label={t("lti.platforms.loading")} />
      ) : !platforms ? (
        <ErrorPanel
          title={t("lti.platforms.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          {platforms.length === 0 ? (
            <p className="empty">{t("lti.platforms.none")}</p>
          ) : (
            <PlatformTable platforms={platforms} />
          )}
        </>
      )}
    </section>
  );
}

function PlatformTable({ platforms }: { platforms: LtiPlatform[] }) {
  const { t } = useTranslation();
  const approve = useApproveLtiPlatform();
  const [approving, setApproving] = useState<LtiPlatform | null>(null);
  const close = () => {
    setApproving(null);
    approve.reset();
  };
  return (
    <>
      <div className="table-scroll">
        <table className="table" aria-label={t("lti.platforms.title")}>
          <thead>
            <tr>
              <th scope="col">{t("lti.platforms.name")}</th>
              <th scope="col">{t("lti.platforms.status")}</th>
              <th scope="col">{t("lti.platforms.issuer")}</th>
              <th scope="col">{t("lti.platforms.clientId")}</th>
              <th scope="col">{t("lti.platforms.deployments")}</th>
              <th scope="col">{t("lti.platforms.source")}</th>
            </tr>
          </thead>
          <tbody>
            {platforms.map((platform) => (
              <tr key={platform.id} data-platform={platform.id} data-status={platform.status}>
                <th scope="row" className="lti-name" translate="no">
                  {platform.name}
                </th>
                <td className="lti-wrap">
                  {platform.status === "active" ? (
                    <span className="status-badge status-running">{t("lti.platforms.active")}</span>
                  ) : (
                    <div className="lti-pending">
                      <span className="status-badge status-stopping">{t("lti.platforms.pending")}</span>
                      <span className="muted small">{t("lti.platforms.pendingHint")}</span>
                      <button type="button" className="button" onClick={() => setApproving(platform)}>
                        {t("lti.platforms.approve")}
                      </button>
                    </div>
                  )}
                </td>
                <td>
                  <LongId value={platform.issuer} />
                </td>
                <td>
                  <LongId value={platform.clientId} />
                </td>
                <td>
                  {platform.deploymentIds.length === 0
                    ? "—"
                    : platform.deploymentIds.map((id) => <LongId key={id} value={id} />)}
                </td>
                <td className="lti-source">{t(`lti.platforms.sources.${platform.source}`)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ConfirmDialog
        open={approving !== null}
        title={t("lti.platforms.confirmTitle", { name: approving?.name ?? "" })}
        confirmLabel={t("lti.platforms.approve")}
        pendingLabel={t("lti.platforms.approving")}
        pending={approve.isPending}
        error={
          approve.isError && (
            <p className="notice notice-error" role="alert">
              <ErrorText error={approve.error} />
            </p>
          )
        }
        onConfirm={() => approving && approve.mutate(approving.id, { onSuccess: close })}
        onCancel={close}
      >
        <div className="lti-approve">
          <p>{t("lti.platforms.confirmIssuer")}</p>
          <p className="lti-code" translate="no">
            {approving?.issuer}
          </p>
          <p>{t("lti.platforms.confirmMeaning")}</p>
        </div>
      </ConfirmDialog>
    </>
  );
}

/**
 * An issuer, client id or deployment id: cut with an ellipsis so that the status and the approve button
 * stay on screen, whole in its tooltip, and selected whole with one click for copying.
 */
function LongId({ value }: { value: string }) {
  return (
    <span className="lti-code lti-id" title={value} translate="no">
      {value}
    </span>
  );
}
