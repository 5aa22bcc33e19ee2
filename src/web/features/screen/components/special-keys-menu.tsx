import { useId, useRef, useState, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import { specialKeyLabel, specialKeys, type SpecialKey } from "../lib/special-keys.ts";

const groups = [
  { kind: "ctrl-alt-del", name: "system" },
  { kind: "function", name: "function" },
  { kind: "ctrl-alt-function", name: "consoles" },
] as const;

/**
 * Keys the browser or the person's own computer keeps for itself, sent into the VM: a button that
 * opens a panel of key buttons (Escape closes it); a key pressed closes it and gives the screen the
 * focus back.
 */
export function SpecialKeysMenu({
  disabled,
  onPress,
}: {
  disabled: boolean;
  onPress: (key: SpecialKey) => void;
}) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const opener = useRef<HTMLButtonElement>(null);
  const shown = open && !disabled;
  const close = (event: KeyboardEvent) => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    setOpen(false);
    opener.current?.focus();
  };
  return (
    <div className="screen-special-keys" onKeyDown={close}>
      <button
        ref={opener}
        type="button"
        className="button button-quiet"
        aria-expanded={shown}
        aria-controls={panelId}
        disabled={disabled}
        onClick={() => setOpen(!open)}
      >
        {t("screen.keys.open")}
      </button>
      <div id={panelId} className="screen-keys-panel" hidden={!shown}>
        {groups.map((group) => (
          <div
            key={group.kind}
            role="group"
            aria-label={t(`screen.keys.${group.name}`)}
            className="screen-keys-group"
          >
            {specialKeys
              .filter((key) => key.kind === group.kind)
              .map((key) => (
                <button
                  key={specialKeyLabel(key)}
                  type="button"
                  className="button"
                  translate="no"
                  onClick={() => {
                    setOpen(false);
                    onPress(key);
                  }}
                >
                  {specialKeyLabel(key)}
                </button>
              ))}
          </div>
        ))}
      </div>
    </div>
  );
}
