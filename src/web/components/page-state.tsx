import type { ReactNode } from "react";
import { getErrorMessage } from "../lib/api-error.ts";

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
  return (
    <div className="panel panel-error" role="alert">
      <h2 className="panel-title">{title}</h2>
      <p>{getErrorMessage(error)}</p>
      {children}
      {onRetry && (
        <button type="button" className="button" onClick={onRetry}>
          Try again
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
      Could not refresh: {getErrorMessage(error)} Showing the last known state; retrying on its own.
    </p>
  );
}
