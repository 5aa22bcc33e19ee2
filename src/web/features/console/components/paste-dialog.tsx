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
  const preview =
    pending?.text
      .split(/\r\n|\r|\n/)
      .slice(0, previewLines)
      .join("\n") ?? "";
  return (
    <ConfirmDialog
      open={pending !== null}
      title={`Paste ${pending?.lines ?? 0} lines into the console?`}
      confirmLabel="Paste"
      pendingLabel="Pasting…"
      pending={false}
      onConfirm={() => terminal.confirmPaste()}
      onCancel={() => terminal.cancelPaste()}
    >
      <p>The shell in the VM may run each line as a command as soon as it arrives.</p>
      <pre className="console-paste-preview">
        {preview}
        {pending && pending.lines > previewLines ? "\n…" : ""}
      </pre>
    </ConfirmDialog>
  );
}
