import { useEffect, useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { maxPasteCharacters } from "../../../../common/screen-protocol.ts";
import { ConfirmDialog } from "../../../components/confirm-dialog.tsx";
import type { PasteState } from "../lib/screen-connection.ts";
import type { ScreenDisplay } from "../lib/screen-display.ts";

/**
 * A VM's screen has no clipboard: the text is sent to the BFF, which types it into the VM key by key.
 * The dialog stays open while it types, and when the BFF refused it (saying why), so it can be fixed
 * or cancelled; once typed, it closes and the screen says how much was typed.
 */
export function ScreenPasteDialog({
  display,
  paste,
  disabled,
}: {
  display: ScreenDisplay;
  paste: PasteState;
  disabled: boolean;
}) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const [text, setText] = useState("");
  const ids = { text: useId(), count: useId() };
  const typing = paste.kind === "typing";
  // Typed: done. The outcome is shown beside the screen (PasteResult).
  useEffect(() => {
    if (paste.kind === "typed") {
      setOpen(false);
      setText("");
      display.focus();
    }
  }, [paste.kind, display]);
  const cancel = () => {
    setOpen(false);
    display.clearPaste();
    display.focus();
  };
  return (
    <>
      <button
        type="button"
        className="button button-quiet"
        disabled={disabled}
        onClick={() => {
          display.clearPaste();
          setOpen(true);
        }}
      >
        {t("screen.paste.open")}
      </button>
      <ConfirmDialog
        open={open}
        title={t("screen.paste.title")}
        confirmLabel={t("screen.paste.confirm")}
        pendingLabel={t("screen.paste.pending")}
        pending={typing}
        error={
          open && paste.kind === "refused" ? (
            <p className="notice notice-error" role="alert">
              {t(`screen.paste.refused.${paste.reason}`, { max: maxPasteCharacters })}
            </p>
          ) : undefined
        }
        onConfirm={() => {
          if (text !== "" && !disabled) display.paste(text);
        }}
        onCancel={cancel}
      >
        <p>{t("screen.paste.explain", { max: maxPasteCharacters })}</p>
        <label className="field" htmlFor={ids.text}>
          <span className="field-label">{t("screen.paste.label")}</span>
        </label>
        <textarea
          id={ids.text}
          className="screen-paste-text"
          translate="no"
          spellCheck={false}
          rows={6}
          maxLength={maxPasteCharacters}
          aria-describedby={ids.count}
          value={text}
          disabled={typing}
          onChange={(event) => {
            setText(event.target.value);
            if (paste.kind === "refused") display.clearPaste();
          }}
        />
        <p id={ids.count} className="muted small">
          {t("screen.paste.count", { length: text.length, max: maxPasteCharacters })}
        </p>
      </ConfirmDialog>
    </>
  );
}

/** How the last paste went, once the dialog is closed: typed, or lost with the connection. */
export function PasteResult({ display, paste }: { display: ScreenDisplay; paste: PasteState }) {
  const { t } = useTranslation();
  if (paste.kind !== "typed") return null;
  return (
    <p className="screen-paste-result" role="status">
      {t("screen.paste.typed", { count: paste.characters })}{" "}
      <button type="button" className="button button-quiet" onClick={() => display.clearPaste()}>
        {t("screen.paste.dismiss")}
      </button>
    </p>
  );
}
