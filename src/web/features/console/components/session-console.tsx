import { useRef, useState, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import { useSearchParams } from "react-router";
import type { Session } from "../../../../common/api.ts";
import { serialConsole } from "../../../../common/console-protocol.ts";
import { Loading } from "../../../components/page-state.tsx";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";
import { ConsolePanel } from "./console-panel.tsx";

/**
 * The console section of a session page: the owner types, staff observe. A lab may offer terminals
 * besides the serial console: one tab each, the open one named in the page's address (?terminal=N),
 * so a reload comes back to it. A tab once opened stays connected while another is shown: the hub
 * ends a terminal's shell a minute after its last viewer leaves. `onConnectionChange` hears when
 * the serial console connects or drops (the page keeps the boot log open until it connects).
 */
export function SessionConsole({
  session,
  terminals,
  onConnectionChange,
}: {
  session: Session;
  /** How many terminals the session's lab offers besides the serial console; undefined until known. */
  terminals: number | undefined;
  onConnectionChange?: (connected: boolean) => void;
}) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const [opened, setOpened] = useState(false);
  const [searchParams, setSearchParams] = useSearchParams();
  // Once open it stays open: when the VM goes away the console itself says so, with the reason.
  if (session.status === "running" && !opened) setOpened(true);
  const asked = Number(searchParams.get("terminal"));
  const shown = Number.isInteger(asked) && asked >= 1 && asked <= (terminals ?? 0) ? asked : serialConsole;
  const [visited, setVisited] = useState<readonly number[]>([]);
  if (terminals !== undefined && !visited.includes(shown)) setVisited([...visited, shown]);
  const show = (terminal: number) =>
    setSearchParams(
      (params) => {
        if (terminal === serialConsole) params.delete("terminal");
        else params.set("terminal", String(terminal));
        return params;
      },
      { replace: true },
    );
  const tabbed = (terminals ?? 0) > 0;

  return (
    <div className="session-console">
      <h2 className="section-title">{t("console.title")}</h2>
      {!opened ? (
        <p className="muted">
          {session.status === "starting" ? t("console.opensWhenRunning") : t("console.onlyWhileRunning")}
        </p>
      ) : terminals === undefined ? (
        // Not the serial console first and then the terminal the address names.
        <Loading label={t("console.loading")} />
      ) : (
        <>
          {tabbed && <ConsoleTabs terminals={terminals} shown={shown} onShow={show} />}
          <div className="console-tab-panels">
            {visited.map((terminal) => (
              <div
                key={terminal}
                id={panelId(terminal)}
                className="console-tab-panel"
                role={tabbed ? "tabpanel" : undefined}
                aria-labelledby={tabbed ? tabId(terminal) : undefined}
                data-inactive={terminal === shown ? undefined : ""}
              >
                <ConsolePanel
                  sessionId={session.id}
                  observe={me.username !== session.owner}
                  terminal={terminal === serialConsole ? undefined : terminal}
                  onConnectionChange={terminal === serialConsole ? onConnectionChange : undefined}
                />
              </div>
            ))}
          </div>
        </>
      )}
    </div>
  );
}

const tabId = (terminal: number) => `console-tab-${terminal}`;
const panelId = (terminal: number) => `console-tab-panel-${terminal}`;

/** The serial console and each terminal, as tabs: arrow keys, Home and End move between them. */
function ConsoleTabs({
  terminals,
  shown,
  onShow,
}: {
  terminals: number;
  shown: number;
  onShow: (terminal: number) => void;
}) {
  const { t } = useTranslation();
  const list = useRef<HTMLDivElement>(null);
  const choices = [serialConsole, ...Array.from({ length: terminals }, (_, i) => i + 1)];
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
    const terminal = choices[next]!;
    onShow(terminal);
    list.current?.querySelector<HTMLButtonElement>(`#${tabId(terminal)}`)?.focus();
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
          key={terminal}
          id={tabId(terminal)}
          type="button"
          role="tab"
          aria-selected={terminal === shown}
          aria-controls={panelId(terminal)}
          tabIndex={terminal === shown ? 0 : -1}
          onClick={() => onShow(terminal)}
        >
          {terminal === serialConsole
            ? t("console.tabs.serial")
            : t("console.tabs.terminal", { number: terminal })}
        </button>
      ))}
    </div>
  );
}
