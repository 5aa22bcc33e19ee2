// The console's toolbar, key bar and paste guard as a person uses them: the real terminal (xterm.js)
// in the page, with the test playing the BFF on a fake WebSocket.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ConsoleServerMessage, KeyboardMessage } from "../../../../common/console-protocol.ts";
import { FakeWebSocket, latestSocket } from "../../../lib/testing/fake-websocket.ts";
import { renderComponent } from "../../../testing/render-component.tsx";
import ConsoleView from "./console-view.tsx";

/** As the student sees it, typing. */
const owner: KeyboardMessage = {
  type: "keyboard",
  holder: "alice",
  holderIsOwner: true,
  canType: true,
  canTake: false,
  canRelease: false,
};
/** As staff see it: the student types, staff may take over. */
const studentTyping: KeyboardMessage = {
  type: "keyboard",
  holder: "alice",
  holderIsOwner: true,
  canType: false,
  canTake: true,
  canRelease: false,
};
/** As staff see it once they took the keyboard. */
const staffTyping: KeyboardMessage = {
  type: "keyboard",
  holder: "tom",
  holderIsOwner: false,
  canType: true,
  canTake: false,
  canRelease: true,
};

/** Opens the console, the BFF connected to the VM, and says who has the keyboard. */
async function openConsole(keyboard: KeyboardMessage, observe = false) {
  const screen = await renderComponent(<ConsoleView sessionId="s-1" observe={observe} />);
  await vi.waitFor(() => latestSocket());
  const socket = latestSocket();
  const say = (message: ConsoleServerMessage) => socket.serverSend(JSON.stringify(message));
  socket.serverOpen();
  say({ type: "status", state: "connected", message: null });
  say(keyboard);
  await expect.element(screen.getByRole("status").filter({ hasText: "Connected" })).toBeVisible();
  return { screen, socket, say };
}

/** What the page typed into the VM, as text. */
const typed = (socket: FakeWebSocket) =>
  socket
    .sentBinary()
    .map((bytes) => new TextDecoder().decode(bytes))
    .join("");

beforeEach(() => {
  FakeWebSocket.created = [];
  vi.stubGlobal("WebSocket", FakeWebSocket);
  // The text size and screen reader mode are kept per browser: each test starts from the defaults.
  localStorage.clear();
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("the console's toolbar", () => {
  it("tells the owner they have the keyboard and lets them fit the guest to the window", async () => {
    const { screen, socket } = await openConsole(owner);
    await expect.element(screen.getByText("You have the keyboard.")).toBeVisible();

    await screen.getByRole("button", { name: "Fit the guest to this window" }).click();
    await vi.waitFor(() =>
      expect(socket.sentJson()).toContainEqual(expect.objectContaining({ type: "fit-guest" })),
    );
  });

  it("lets staff who watch take the keyboard, and then give it back", async () => {
    const { screen, socket, say } = await openConsole(studentTyping, true);
    await expect.element(screen.getByText("Read-only: the student has the keyboard.")).toBeVisible();
    await expect.element(screen.getByRole("button", { name: "Fit the guest to this window" })).toBeDisabled();
    expect(screen.getByRole("toolbar", { name: "Extra keys" }).query()).toBeNull();

    await screen.getByRole("button", { name: "Take the keyboard" }).click();
    expect(socket.sentJson()).toContainEqual({ type: "take-keyboard" });

    say(staffTyping);
    await expect.element(screen.getByText("You have the keyboard.")).toBeVisible();
    await expect.element(screen.getByRole("button", { name: "Fit the guest to this window" })).toBeEnabled();
    await screen.getByRole("button", { name: "Give it back" }).click();
    expect(socket.sentJson()).toContainEqual({ type: "release-keyboard" });
  });

  it("offers the student to take the keyboard back from staff", async () => {
    const { screen, socket } = await openConsole({
      type: "keyboard",
      holder: "tom",
      holderIsOwner: false,
      canType: false,
      canTake: true,
      canRelease: false,
    });
    await expect.element(screen.getByText("tom has the keyboard.")).toBeVisible();
    await screen.getByRole("button", { name: "Take it back" }).click();
    expect(socket.sentJson()).toContainEqual({ type: "take-keyboard" });
  });

  it("makes the text larger and smaller, and remembers the size", async () => {
    const { screen } = await openConsole(owner);
    const rows = () => getComputedStyle(document.querySelector(".xterm-rows")!).fontSize;
    await vi.waitFor(() => expect(rows()).toBe("14px"));

    await screen.getByRole("button", { name: "Larger text" }).click();
    await screen.getByRole("button", { name: "Larger text" }).click();
    await vi.waitFor(() => expect(rows()).toBe("16px"));
    await screen.getByRole("button", { name: "Smaller text" }).click();
    await vi.waitFor(() => expect(rows()).toBe("15px"));
    screen.unmount();

    await openConsole(owner);
    await vi.waitFor(() => expect(rows()).toBe("15px"));
  });

  it("switches the screen reader mode on and off", async () => {
    const { screen } = await openConsole(owner);
    const mode = screen.getByRole("button", { name: "Screen reader mode" });
    await expect.element(mode).toHaveAttribute("aria-pressed", "false");
    await mode.click();
    await expect.element(mode).toHaveAttribute("aria-pressed", "true");
    await mode.click();
    await expect.element(mode).toHaveAttribute("aria-pressed", "false");
  });

  it("shows the guest's size", async () => {
    const { screen, say } = await openConsole(owner);
    say({ type: "guest-size", cols: 100, rows: 30 });
    await expect.element(screen.getByLabelText("Guest size")).toHaveTextContent("100×30");
  });
});

describe("the console's extra keys", () => {
  it("send the key the phone's keyboard lacks, and Ctrl holds until the next key", async () => {
    const { screen, socket } = await openConsole(owner);
    const keys = screen.getByRole("toolbar", { name: "Extra keys" });
    await keys.getByRole("button", { name: "Escape" }).click();
    await keys.getByRole("button", { name: "Tab" }).click();
    await vi.waitFor(() => expect(typed(socket)).toBe("\x1b\t"));

    const ctrl = keys.getByRole("button", { name: "Ctrl" });
    await ctrl.click();
    await expect.element(ctrl).toHaveAttribute("aria-pressed", "true");
    await keys.getByRole("button", { name: "Left arrow" }).click();
    await expect.element(ctrl).toHaveAttribute("aria-pressed", "false");
    await vi.waitFor(() => expect(typed(socket)).toBe("\x1b\t\x1b[D"));
  });
});

describe("pasting into the console", () => {
  const paste = (text: string) => {
    const clipboardData = new DataTransfer();
    clipboardData.setData("text/plain", text);
    document
      .querySelector('[data-testid="console-screen"]')!
      .dispatchEvent(new ClipboardEvent("paste", { clipboardData, bubbles: true, cancelable: true }));
  };

  it("asks before a paste of many lines, and types it once confirmed", async () => {
    const { screen, socket } = await openConsole(owner);
    const lines = Array.from({ length: 10 }, (_, i) => `echo ${i + 1}`).join("\n");
    paste(lines);

    const dialog = screen.getByRole("dialog", { name: "Paste 10 lines into the console?" });
    await expect.element(dialog).toBeVisible();
    await expect.element(dialog).toHaveTextContent("echo 8");
    expect(dialog.element().textContent).not.toContain("echo 9");
    expect(typed(socket)).toBe("");

    await dialog.getByRole("button", { name: "Paste" }).click();
    await vi.waitFor(() => expect(typed(socket)).toBe(lines.replaceAll("\n", "\r")));
    await expect.element(dialog).not.toBeInTheDocument();
  });

  it("types nothing when the paste is cancelled", async () => {
    const { screen, socket } = await openConsole(owner);
    paste("rm -rf a\nrm -rf b\nrm -rf c\nrm -rf d\nrm -rf e");
    const dialog = screen.getByRole("dialog");
    await expect.element(dialog).toBeVisible();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect.element(dialog).not.toBeInTheDocument();
    expect(typed(socket)).toBe("");
  });
});
