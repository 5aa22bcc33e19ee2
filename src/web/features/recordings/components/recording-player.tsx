// The recording in an xterm.js terminal with play/pause, speed and a seek bar. Loaded lazily (like
// the console): xterm.js is most of its weight.
import { Terminal } from "@xterm/xterm";
import "@xterm/xterm/css/xterm.css";
import "../recordings.css";
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import { useTranslation } from "react-i18next";
import { terminalAppearance } from "../../../lib/terminal-appearance.ts";
import { CastPlayer, type Cast } from "../lib/asciicast-player.ts";

const speeds = [1, 2, 4, 8];
const idleState = { playing: false, position: 0, speed: 1 };

export default function RecordingPlayer({ cast }: { cast: Cast }) {
  const { t } = useTranslation();
  const box = useRef<HTMLDivElement>(null);
  const [player, setPlayer] = useState<CastPlayer | null>(null);

  useEffect(() => {
    if (!box.current) return;
    const terminal = new Terminal({
      cols: cast.width,
      rows: cast.height,
      scrollback: 5000,
      disableStdin: true,
      convertEol: false,
      ...terminalAppearance,
    });
    terminal.open(box.current);
    const created = new CastPlayer(cast, {
      write: (text) => terminal.write(text),
      reset: () => terminal.reset(),
    });
    setPlayer(created);
    return () => {
      created.dispose();
      terminal.dispose();
    };
  }, [cast]);

  const state = useSyncExternalStore(
    (listener) => player?.subscribe(listener) ?? (() => undefined),
    () => player?.snapshot ?? idleState,
  );

  return (
    <section className="recording-player" aria-label={t("recordings.player")}>
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
            max={Math.max(cast.duration, 0.001)}
            step={0.1}
            value={state.position}
            onChange={(event) => player?.seek(Number(event.target.value))}
          />
        </label>
        <span data-testid="recording-time">
          {t("recordings.time", {
            position: state.position.toFixed(1),
            duration: cast.duration.toFixed(1),
          })}
        </span>
      </div>
      <div ref={box} className="recording-screen" data-testid="recording-screen" />
    </section>
  );
}
