import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../../components/confirm-dialog.tsx";
import type { ConsoleTerminal, ConsoleTerminalState } from "../lib/console-terminal.ts";

const previewLines = 8;

/** Asks before a paste of many lines, each of which the shell may run as it arrives. */
export function PasteDialog({
  terminal,
  pending,
}: {
  terminal: ConsoleTerminal;
  pending: ConsoleTerminalState["pendingPaste"];
}) {
  const { t } = useTranslation();
  const preview =
    pending?.text
      .split(/\r\n|\r|\n/)
      .slice(0, previewLines)
      .join("\n") ?? "";
  return (
    <ConfirmDialog
      open={pending !== null}
      title={t("console.paste.title", { count: pending?.lines ?? 0 })}
      confirmLabel={t("console.paste.confirm")}
      pendingLabel={t("console.paste.pending")}
      pending={false}
      onConfirm={() => terminal.confirmPaste()}
      onCancel={() => terminal.cancelPaste()}
    >
      <p>{t("console.paste.warning")}</p>
      <pre className="console-paste-preview" translate="no">
        {preview}
        {pending && pending.lines > previewLines ? "\n…" : ""}
      </pre>
    </ConfirmDialog>
  );
}
