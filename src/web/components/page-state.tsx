import type { ReactNode } from "react";
import { Trans, useTranslation } from "react-i18next";
import { ErrorText } from "./error-text.tsx";

export function Loading({ label }: { label: string }) {
  return (
    <div className="page-state" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

/** A failed load: the plain-words reason and a way to try again. */
export function ErrorPanel({
  title,
  error,
  onRetry,
  children,
}: {
  title: string;
  error: unknown;
  onRetry?: () => void;
  children?: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <div className="panel panel-error" role="alert">
      <h2 className="panel-title">{title}</h2>
      <p>
        <ErrorText error={error} />
      </p>
      {children}
      {onRetry && (
        <button type="button" className="button" onClick={onRetry}>
          {t("common.tryAgain")}
        </button>
      )}
    </div>
  );
}

/** A refresh failed but older data is still on screen: say so quietly instead of replacing the page. */
export function RefreshWarning({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="notice notice-warning" role="status">
      <Trans i18nKey="common.refreshFailed" components={{ reason: <ErrorText error={error} /> }} />
    </p>
  );
}
