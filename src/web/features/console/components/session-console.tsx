import { useRef, useState, type KeyboardEvent, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { useSearchParams } from "react-router";
import type { Session } from "../../../../common/api.ts";
import type { LabConsole } from "../../../../common/lab.ts";
import { serialConsole } from "../../../../common/console-protocol.ts";
import { Loading } from "../../../components/page-state.tsx";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";
import { ConsolePanel } from "./console-panel.tsx";

/** A tab of the console section: the serial console, the VM's screen, or one of the lab's terminals. */
type ConsoleTab = "serial" | "screen" | number;

/**
 * The console section of a session page: the owner types, staff observe. A tab per console the lab
 * offers, in the lab's order (its serial console, its screen), then one per terminal; the open one is
 * named in the page's address (?console=screen, ?terminal=N; none for the first), so a reload comes
 * back to it. A tab once opened stays connected while another is shown: the hub ends a terminal's
 * shell a minute after its last viewer leaves. The screen is another feature's: the page passes it in
 * as `screen`. `onConnectionChange` hears when the serial console or the screen connects or drops
 * (the page keeps the boot log open until one of them connects).
 */
export function SessionConsole({
  session,
  terminals,
  consoles,
  screen,
  onConnectionChange,
}: {
  session: Session;
  /** How many terminals the session's lab offers besides its consoles; undefined until known. */
  terminals: number | undefined;
  /** The consoles the session's lab offers, in its order; undefined until known. */
  consoles: readonly LabConsole[] | undefined;
  /** The VM's screen, for a lab that offers it. */
  screen: (props: { observe: boolean; onConnectionChange?: (connected: boolean) => void }) => ReactNode;
  onConnectionChange?: (connected: boolean) => void;
}) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const [opened, setOpened] = useState(false);
  const [searchParams, setSearchParams] = useSearchParams();
  // Once open it stays open: when the VM goes away the console itself says so, with the reason.
  if (session.status === "running" && !opened) setOpened(true);
  const known = terminals !== undefined && consoles !== undefined;
  const choices = known ? tabsOf(consoles, terminals) : [];
  const first = choices[0] ?? "serial";
  const asked = tabInAddress(searchParams);
  const shown = choices.includes(asked ?? first) ? (asked ?? first) : first;
  const [visited, setVisited] = useState<readonly ConsoleTab[]>([]);
  if (known && !visited.includes(shown)) setVisited([...visited, shown]);
  const show = (tab: ConsoleTab) =>
    setSearchParams(
      (params) => {
        params.delete("terminal");
        params.delete("console");
        if (tab !== first) {
          if (typeof tab === "number") params.set("terminal", String(tab));
          else params.set("console", tab);
        }
        return params;
      },
      { replace: true },
    );
  const tabbed = choices.length > 1;
  const observe = me.username !== session.owner;

  return (
    <div className="session-console">
      <h2 className="section-title">{t("console.title")}</h2>
      {!opened ? (
        <p className="muted">
          {session.status === "starting" ? t("console.opensWhenRunning") : t("console.onlyWhileRunning")}
        </p>
      ) : !known ? (
        // Not the serial console first and then the tab the address names.
        <Loading label={t("console.loading")} />
      ) : (
        <>
          {tabbed && <ConsoleTabs choices={choices} shown={shown} onShow={show} />}
          <div className="console-tab-panels">
            {visited.map((tab) => (
              <div
                key={tab}
                id={panelId(tab)}
                className="console-tab-panel"
                role={tabbed ? "tabpanel" : undefined}
                aria-labelledby={tabbed ? tabId(tab) : undefined}
                data-inactive={tab === shown ? undefined : ""}
              >
                {tab === "screen" ? (
                  screen({ observe, onConnectionChange })
                ) : (
                  <ConsolePanel
                    sessionId={session.id}
                    observe={observe}
                    terminal={tab === "serial" ? undefined : tab}
                    onConnectionChange={tab === "serial" ? onConnectionChange : undefined}
                  />
                )}
              </div>
            ))}
          </div>
        </>
      )}
    </div>
  );
}

function tabsOf(consoles: readonly LabConsole[], terminals: number): ConsoleTab[] {
  return [
    ...consoles.map((each): ConsoleTab => (each === "graphical" ? "screen" : "serial")),
    ...Array.from({ length: terminals }, (_, i) => i + 1),
  ];
}

/** The tab the address names, if it names one. */
function tabInAddress(params: URLSearchParams): ConsoleTab | undefined {
  const terminal = params.get("terminal");
  if (terminal !== null) {
    const number = Number(terminal);
    return Number.isInteger(number) && number >= 1 ? number : undefined;
  }
  const which = params.get("console");
  return which === "screen" || which === "serial" ? which : undefined;
}

// The serial console's and the terminals' ids are their numbers, as they were before the screen.
const tabKey = (tab: ConsoleTab) => (tab === "serial" ? String(serialConsole) : String(tab));
const tabId = (tab: ConsoleTab) => `console-tab-${tabKey(tab)}`;
const panelId = (tab: ConsoleTab) => `console-tab-panel-${tabKey(tab)}`;

/** The consoles and each terminal, as tabs: arrow keys, Home and End move between them. */
function ConsoleTabs({
  choices,
  shown,
  onShow,
}: {
  choices: readonly ConsoleTab[];
  shown: ConsoleTab;
  onShow: (tab: ConsoleTab) => void;
}) {
  const { t } = useTranslation();
  const list = useRef<HTMLDivElement>(null);
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
    const tab = choices[next]!;
    onShow(tab);
    list.current?.querySelector<HTMLButtonElement>(`#${tabId(tab)}`)?.focus();
  };
  return (
    <div
      ref={list}
      role="tablist"
      className="console-tabs"
      aria-label={t("console.tabs.label")}
      onKeyDown={move}
    >
      {choices.map((tab) => (
        <button
          key={tab}
          id={tabId(tab)}
          type="button"
          role="tab"
          aria-selected={tab === shown}
          aria-controls={panelId(tab)}
          tabIndex={tab === shown ? 0 : -1}
          onClick={() => onShow(tab)}
        >
          {tab === "serial"
            ? t("console.tabs.serial")
            : tab === "screen"
              ? t("console.tabs.screen")
              : t("console.tabs.terminal", { number: tab })}
        </button>
      ))}
    </div>
  );
}
