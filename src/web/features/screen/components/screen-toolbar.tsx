import { useTranslation } from "react-i18next";
import { ConnectionStatusLine } from "../../../components/connection-status-line.tsx";
import { KeyboardControls, KeyboardNewsLine } from "../../../components/keyboard-controls.tsx";
import { ViewerList } from "../../../components/viewer-list.tsx";
import type { ScreenDisplay, ScreenDisplayState } from "../lib/screen-display.ts";
import { ScreenPasteDialog } from "./screen-paste-dialog.tsx";
import { SpecialKeysMenu } from "./special-keys-menu.tsx";

/** The screen's status, who watches and who types, as on the console; then what the holder can send. */
export function ScreenToolbar({
  display,
  state,
  observe,
}: {
  display: ScreenDisplay;
  state: ScreenDisplayState;
  /** Staff (or the owner's read-only window); otherwise the owner. */
  observe: boolean;
}) {
  const { t } = useTranslation();
  const { status, keyboard, viewers, keyboardNews } = state;
  const ended = status.kind === "ended";
  const canSend = !ended && state.live && keyboard?.canType === true;

  return (
    <div className="screen-toolbar">
      <ConnectionStatusLine status={status} onReconnectNow={() => display.reconnectNow()} />
      {viewers && !ended && <ViewerList viewers={viewers} />}
      <KeyboardNewsLine news={ended ? null : keyboardNews} />
      {keyboard && !ended && (
        <KeyboardControls
          keyboard={keyboard}
          observe={observe}
          onTake={() => display.takeKeyboard()}
          onRelease={() => display.releaseKeyboard()}
        />
      )}
      {!ended && (
        <div className="screen-actions">
          <SpecialKeysMenu disabled={!canSend} onPress={(key) => display.pressSpecialKey(key)} />
          <ScreenPasteDialog display={display} paste={state.paste} disabled={!canSend} />
          {!canSend && keyboard && !keyboard.canType && (
            <span className="muted small">{t("screen.viewOnlyHint")}</span>
          )}
        </div>
      )}
    </div>
  );
}
