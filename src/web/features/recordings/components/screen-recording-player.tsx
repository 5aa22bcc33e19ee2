// A screen recording on a canvas, with the console player's controls. Loaded lazily, as that one is.
import "../recordings.css";
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import { useTranslation } from "react-i18next";
import type { ScreenRecording } from "../../../../common/screen-recording.ts";
import { CanvasScreen } from "../lib/canvas-screen.ts";
import { ScreenPlayer } from "../lib/screen-player.ts";
import { PlayerControls } from "./player-controls.tsx";

const idleState = { playing: false, position: 0, speed: 1 };

export default function ScreenRecordingPlayer({ recording }: { recording: ScreenRecording }) {
  const { t } = useTranslation();
  const canvas = useRef<HTMLCanvasElement>(null);
  const [player, setPlayer] = useState<ScreenPlayer | null>(null);

  useEffect(() => {
    if (!canvas.current) return;
    const created = new ScreenPlayer(recording, new CanvasScreen(canvas.current));
    // The first screen recorded, as a console's player starts on an empty screen ready to play.
    created.seek(0);
    setPlayer(created);
    return () => created.dispose();
  }, [recording]);

  const state = useSyncExternalStore(
    (listener) => player?.subscribe(listener) ?? (() => undefined),
    () => player?.snapshot ?? idleState,
  );

  return (
    <section className="recording-player" aria-label={t("recordings.screenPlayer")}>
      <PlayerControls state={state} player={player} duration={recording.duration} />
      <div className="recording-screen">
        <canvas
          ref={canvas}
          className="recording-canvas"
          width={recording.width}
          height={recording.height}
          role="img"
          aria-label={t("recordings.screenImage")}
          data-testid="recording-canvas"
        />
      </div>
    </section>
  );
}
