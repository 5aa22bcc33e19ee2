// The session page's console section: which tab shows, what the address says, and the arrow keys.
import "../../../styles.css";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { page, userEvent } from "vitest/browser";
import { useLocation } from "react-router";
import type { LabConsole } from "../../../../common/lab.ts";
import { FakeWebSocket } from "../../../lib/testing/fake-websocket.ts";
import { aSession, aUser } from "../../../testing/data-generators.ts";
import { renderComponent } from "../../../testing/render-component.tsx";
import { SessionConsole } from "./session-console.tsx";

/** The page's address, where a reload would read the open tab from. */
function Address() {
  return <output aria-label="Address">{useLocation().search}</output>;
}

function renderConsole({
  status = "running",
  consoles = ["serial", "graphical"],
  terminals = 2,
  address = "/",
  me = aUser({ username: "alice" }),
}: {
  status?: "starting" | "running";
  consoles?: LabConsole[];
  terminals?: number;
  address?: string;
  me?: ReturnType<typeof aUser>;
} = {}) {
  return renderComponent(
    <>
      <SessionConsole
        session={aSession({ owner: "alice", status })}
        consoles={consoles}
        terminals={terminals}
        screen={({ observe }) => <p>{observe ? "Watching the screen" : "Using the screen"}</p>}
      />
      <Address />
    </>,
    { me, address },
  );
}

const tab = (name: string) => page.getByRole("tab", { name, exact: true });
const address = () => page.getByRole("status", { name: "Address" });

beforeEach(() => {
  // The serial console and terminals open their sockets; nobody answers them here.
  FakeWebSocket.created = [];
  vi.stubGlobal("WebSocket", FakeWebSocket);
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("the session's consoles", () => {
  it("waits for the VM to run before it opens", async () => {
    await renderConsole({ status: "starting" });
    await expect.element(page.getByText("The console opens as soon as the VM is running.")).toBeVisible();
    expect(page.getByRole("tab").elements()).toHaveLength(0);
  });

  it("offers a tab per console and terminal, in the lab's order, the first one open", async () => {
    await renderConsole();
    const names = page
      .getByRole("tab")
      .elements()
      .map((element) => element.textContent);
    expect(names).toEqual(["Serial console", "Screen", "Terminal 1", "Terminal 2"]);
    await expect.element(tab("Serial console")).toHaveAttribute("aria-selected", "true");
    await expect.element(page.getByRole("region", { name: "Console" })).toBeVisible();
    await expect.element(address()).toHaveTextContent(/^$/);
  });

  it("shows the tab clicked and names it in the address, keeping the one left open behind it", async () => {
    await renderConsole();
    await expect.element(page.getByRole("region", { name: "Console" })).toBeVisible();
    await tab("Screen").click();
    await expect.element(page.getByText("Using the screen")).toBeVisible();
    await expect.element(tab("Screen")).toHaveAttribute("aria-selected", "true");
    await expect.element(address()).toHaveTextContent("?console=screen");
    // Still open, out of sight (out of the accessibility tree, too: found by its label).
    const serial = document.querySelector('section[aria-label="Console"]');
    expect(serial).not.toBeNull();
    await expect.element(page.elementLocator(serial!)).not.toBeVisible();

    await tab("Terminal 2").click();
    await expect.element(page.getByRole("region", { name: "Terminal 2" })).toBeVisible();
    await expect.element(address()).toHaveTextContent("?terminal=2");
  });

  it("opens the tab the address names", async () => {
    await renderConsole({ address: "/?terminal=1" });
    await expect.element(tab("Terminal 1")).toHaveAttribute("aria-selected", "true");
    await expect.element(page.getByRole("region", { name: "Terminal 1" })).toBeVisible();
  });

  it("opens the first tab when the address names one the lab does not have", async () => {
    await renderConsole({ address: "/?terminal=5" });
    await expect.element(tab("Serial console")).toHaveAttribute("aria-selected", "true");
  });

  it("moves between tabs with the arrow keys, Home and End", async () => {
    await renderConsole();
    await expect.element(tab("Serial console")).toHaveAttribute("aria-selected", "true");
    tab("Serial console").element().focus();

    await userEvent.keyboard("{ArrowRight}");
    await expect.element(tab("Screen")).toHaveAttribute("aria-selected", "true");
    await expect.element(tab("Screen")).toHaveFocus();
    await userEvent.keyboard("{End}");
    await expect.element(tab("Terminal 2")).toHaveFocus();
    await userEvent.keyboard("{ArrowRight}");
    await expect.element(tab("Serial console")).toHaveFocus();
    await userEvent.keyboard("{ArrowLeft}");
    await expect.element(tab("Terminal 2")).toHaveAttribute("aria-selected", "true");
    await userEvent.keyboard("{Home}");
    await expect.element(tab("Serial console")).toHaveAttribute("aria-selected", "true");
  });

  it("lets staff watch rather than use the screen", async () => {
    await renderConsole({
      consoles: ["graphical"],
      terminals: 0,
      me: aUser({ username: "tom", role: "ta" }),
    });
    await expect.element(page.getByText("Watching the screen")).toBeVisible();
    expect(page.getByRole("tab").elements()).toHaveLength(0);
  });
});
