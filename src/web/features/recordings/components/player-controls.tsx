// Play/pause, speed, a seek bar and the time: the same controls for a console's and a screen's player.
import { useTranslation } from "react-i18next";
import type { PlayerState } from "../lib/asciicast-player.ts";

const speeds = [1, 2, 4, 8];

export interface PlayerActions {
  play(): void;
  pause(): void;
  setSpeed(speed: number): void;
  seek(seconds: number): void;
}

export function PlayerControls({
  state,
  player,
  duration,
}: {
  state: PlayerState;
  player: PlayerActions | null;
  duration: number;
}) {
  const { t } = useTranslation();
  return (
    <div className="recording-controls">
      <button
        type="button"
        className="button"
        disabled={!player}
        onClick={() => (state.playing ? player?.pause() : player?.play())}
      >
        {state.playing ? t("recordings.pause") : t("recordings.play")}
      </button>
      <label>
        {t("recordings.speed")}{" "}
        <select value={state.speed} onChange={(event) => player?.setSpeed(Number(event.target.value))}>
          {speeds.map((speed) => (
            <option key={speed} value={speed}>
              {`${speed}×`}
            </option>
          ))}
        </select>
      </label>
      <label className="recording-seek">
        {t("recordings.position")}{" "}
        <input
          type="range"
          min={0}
          max={Math.max(duration, 0.001)}
          step={0.1}
          value={state.position}
          onChange={(event) => player?.seek(Number(event.target.value))}
        />
      </label>
      <span data-testid="recording-time">
        {t("recordings.time", {
          position: state.position.toFixed(1),
          duration: duration.toFixed(1),
        })}
      </span>
    </div>
  );
}
