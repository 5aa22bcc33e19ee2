// The recording in an xterm.js terminal with play/pause, speed and a seek bar. Loaded lazily (like
// the console): xterm.js is most of its weight.
import { Terminal } from "@xterm/xterm";
import "@xterm/xterm/css/xterm.css";
import "../recordings.css";
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import { useTranslation } from "react-i18next";
import { terminalAppearance } from "../../../lib/terminal-appearance.ts";
import { CastPlayer, type Cast } from "../lib/asciicast-player.ts";
import { PlayerControls } from "./player-controls.tsx";

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
      <PlayerControls state={state} player={player} duration={cast.duration} />
      <div ref={box} className="recording-screen" data-testid="recording-screen" />
    </section>
  );
}
