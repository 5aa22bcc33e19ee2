import { useRef, useState, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import { useSearchParams } from "react-router";
import type { Session } from "../../../../common/api.ts";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";
import { ConsolePanel } from "./console-panel.tsx";

/**
 * The console section of a session page: the owner types, staff observe. A lab may offer terminals
 * besides the serial console: one tab each, the open one named in the page's address (?terminal=N),
 * so a reload comes back to it. `onConnectionChange` hears when the serial console connects or drops
 * (the page keeps the boot log open until it connects).
 */
export function SessionConsole({
  session,
  terminals,
  onConnectionChange,
}: {
  session: Session;
  /** How many terminals the session's lab offers besides the serial console. */
  terminals: number;
  onConnectionChange?: (connected: boolean) => void;
}) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const [opened, setOpened] = useState(false);
  const [searchParams, setSearchParams] = useSearchParams();
  // Once open it stays open: when the VM goes away the console itself says so, with the reason.
  if (session.status === "running" && !opened) setOpened(true);
  const asked = Number(searchParams.get("terminal"));
  const shown = Number.isInteger(asked) && asked >= 1 && asked <= terminals ? asked : undefined;
  const show = (terminal: number | undefined) =>
    setSearchParams(
      (params) => {
        if (terminal === undefined) params.delete("terminal");
        else params.set("terminal", String(terminal));
        return params;
      },
      { replace: true },
    );

  return (
    <div className="session-console">
      <h2 className="section-title">{t("console.title")}</h2>
      {opened ? (
        <>
          {terminals > 0 && <ConsoleTabs terminals={terminals} shown={shown} onShow={show} />}
          <div
            id="console-tab-panel"
            role={terminals > 0 ? "tabpanel" : undefined}
            aria-labelledby={terminals > 0 ? tabId(shown) : undefined}
          >
            <ConsolePanel
              key={shown ?? 0}
              sessionId={session.id}
              observe={me.username !== session.owner}
              terminal={shown}
              onConnectionChange={shown === undefined ? onConnectionChange : undefined}
            />
          </div>
        </>
      ) : (
        <p className="muted">
          {session.status === "starting" ? t("console.opensWhenRunning") : t("console.onlyWhileRunning")}
        </p>
      )}
    </div>
  );
}

const tabId = (terminal: number | undefined) => `console-tab-${terminal ?? 0}`;

/** The serial console and each terminal, as tabs: arrow keys, Home and End move between them. */
function ConsoleTabs({
  terminals,
  shown,
  onShow,
}: {
  terminals: number;
  shown: number | undefined;
  onShow: (terminal: number | undefined) => void;
}) {
  const { t } = useTranslation();
  const list = useRef<HTMLDivElement>(null);
  const choices: (number | undefined)[] = [undefined, ...Array.from({ length: terminals }, (_, i) => i + 1)];
  const move = (event: KeyboardEvent) => {
    const at = choices.indexOf(shown);
    const next = {
      ArrowRight: (at + 1) % choices.length,
      ArrowLeft: (at - 1 + choices.length) % choices.length,
      Home: 0,
      End: choices.length - 1,
    }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    onShow(choices[next]);
    list.current?.querySelector<HTMLButtonElement>(`#${tabId(choices[next])}`)?.focus();
  };
  return (
    <div
      ref={list}
      role="tablist"
      className="console-tabs"
      aria-label={t("console.tabs.label")}
      onKeyDown={move}
    >
      {choices.map((terminal) => (
        <button
          key={terminal ?? 0}
          id={tabId(terminal)}
          type="button"
          role="tab"
          aria-selected={terminal === shown}
          aria-controls="console-tab-panel"
          tabIndex={terminal === shown ? 0 : -1}
          onClick={() => onShow(terminal)}
        >
          {terminal === undefined
            ? t("console.tabs.serial")
            : t("console.tabs.terminal", { number: terminal })}
        </button>
      ))}
    </div>
  );
}
