import { useEffect, useId, useRef, type ReactNode } from "react";
import { useTranslation } from "react-i18next";

interface ConfirmDialogProps {
  open: boolean;
  title: string;
  confirmLabel: string;
  pendingLabel: string;
  pending: boolean;
  /** Shown inside the dialog when the action failed, so the person can retry or cancel. */
  error?: ReactNode;
  onConfirm: () => void;
  onCancel: () => void;
  children: ReactNode;
}

/**
 * A modal confirmation on the native <dialog>: the browser traps focus, Escape cancels and the page
 * behind becomes inert, with no focus-trap code of our own.
 */
export function ConfirmDialog(props: ConfirmDialogProps) {
  const { open, title, confirmLabel, pendingLabel, pending, error, onConfirm, onCancel, children } = props;
  const { t } = useTranslation();
  const dialogRef = useRef<HTMLDialogElement>(null);
  const titleId = useId();

  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={dialogRef}
      className="dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (!pending) onCancel();
      }}
    >
      <h2 id={titleId} className="dialog-title">
        {title}
      </h2>
      <div className="dialog-body">{children}</div>
      {error}
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel} disabled={pending} autoFocus>
          {t("common.cancel")}
        </button>
        <button type="button" className="button button-danger" onClick={onConfirm} disabled={pending}>
          {pending ? pendingLabel : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
