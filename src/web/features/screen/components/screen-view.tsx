import "./screen.css";
import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { screenUrl } from "../api/screen-url.ts";
import { PasteResult } from "./screen-paste-dialog.tsx";
import { ScreenToolbar } from "./screen-toolbar.tsx";
import { useScreenDisplay, useScreenState } from "./use-screen-display.ts";

export interface ScreenViewProps {
  sessionId: string;
  observe: boolean;
  /** Told whenever the screen becomes connected or stops being so (a lab without a serial console's boot log follows it). */
  onConnectionChange?: (connected: boolean) => void;
}

/** The VM's screen with its controls. Loaded lazily (see screen-panel.tsx). */
export default function ScreenView({ sessionId, observe, onConnectionChange }: ScreenViewProps) {
  const { t } = useTranslation();
  const hostRef = useRef<HTMLDivElement>(null);
  const stillRef = useRef<HTMLCanvasElement>(null);
  const display = useScreenDisplay(hostRef, stillRef, screenUrl(sessionId, observe));
  const state = useScreenState(display);
  const connected = state?.status.kind === "connected";
  useEffect(() => onConnectionChange?.(connected), [connected, onConnectionChange]);
  const ended = state?.status.kind === "ended";
  const canType = state?.keyboard?.canType === true && !ended;
  const picture = state?.live ? "live" : state?.still ? "still" : "none";

  return (
    <section
      className="screen"
      aria-label={t("screen.title")}
      data-status={state?.status.kind ?? "connecting"}
      data-mode={observe ? "observe" : "interactive"}
      data-picture={picture}
      data-can-type={canType ? "" : undefined}
    >
      {display && state && <ScreenToolbar display={display} state={state} observe={observe} />}
      {display && state && <PasteResult display={display} paste={state.paste} />}
      <div
        className="screen-box"
        data-testid="screen-box"
        style={state?.size ? { aspectRatio: `${state.size.width} / ${state.size.height}` } : undefined}
      >
        {/* noVNC's own screen: a canvas scaled to this box; it takes keys only while focused. */}
        <div
          ref={hostRef}
          className="screen-host"
          data-testid="screen-host"
          translate="no"
          role="img"
          aria-roledescription={t("screen.roleDescription")}
          aria-label={canType ? t("screen.canvasTyping") : t("screen.canvasViewOnly")}
        />
        <canvas ref={stillRef} className="screen-still" aria-hidden="true" hidden={picture !== "still"} />
        {picture !== "live" && !ended && (
          <p className="screen-caption" role="status">
            {picture === "still" ? t("screen.stillPicture") : t("screen.waitingPicture")}
          </p>
        )}
      </div>
    </section>
  );
}
