import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CommittedText } from "./committed-text.ts";

// The DOM's events as CommittedText reads them; the browser's own sequences run in e2e/console-input.spec.ts.
function event(type: string, fields: Record<string, unknown> = {}): Event {
  return Object.assign(new Event(type, { cancelable: true, bubbles: true }), fields);
}

function insertText(data: string): Event {
  return event("beforeinput", { inputType: "insertText", data, isComposing: false });
}

let host: EventTarget;
let sent: string[];
let committed: CommittedText;

beforeEach(() => {
  vi.useFakeTimers();
  host = new EventTarget();
  sent = [];
});

afterEach(() => {
  committed.dispose();
  vi.useRealTimers();
});

function start(): void {
  committed = new CommittedText(host, (text) => sent.push(text));
}

describe("CommittedText", () => {
  it("sends text inserted with no key down (emoji picker, dictation) once, and keeps it out of the textarea", () => {
    start();
    const inserted = insertText("😀");
    host.dispatchEvent(inserted);
    expect(sent).toEqual(["😀"]);
    expect(inserted.defaultPrevented).toBe(true);
  });

  it("sends an IME's commit whether it comes while its key is down or after it is up", () => {
    start();
    host.dispatchEvent(event("keydown", { keyCode: 229 }));
    host.dispatchEvent(insertText("，"));
    host.dispatchEvent(event("keyup", { keyCode: 229 }));
    host.dispatchEvent(event("keydown", { keyCode: 229 }));
    host.dispatchEvent(event("keyup", { keyCode: 229 }));
    host.dispatchEvent(insertText("。"));
    expect(sent).toEqual(["，", "。"]);
  });

  it("leaves xterm.js the text of keys it reads itself, and compositions", () => {
    start();
    host.dispatchEvent(event("keydown", { keyCode: 65 }));
    const typed = insertText("a");
    host.dispatchEvent(typed);
    const composing = event("beforeinput", {
      inputType: "insertCompositionText",
      data: "に",
      isComposing: true,
    });
    host.dispatchEvent(composing);
    expect(sent).toEqual([]);
    expect(typed.defaultPrevented).toBe(false);
    expect(composing.defaultPrevented).toBe(false);
  });

  it("leaves xterm.js a commit the browser says cannot be cancelled", () => {
    start();
    const uncancellable = Object.assign(new Event("beforeinput", { cancelable: false }), {
      inputType: "insertText",
      data: "あ",
      isComposing: false,
    });
    host.dispatchEvent(uncancellable);
    expect(sent).toEqual([]);
  });

  it("sends text typed right after a composition only once xterm.js has sent the composition", () => {
    // xterm.js's listener sits on its textarea, so it runs before ours; so does its timer.
    host.addEventListener("compositionend", () => setTimeout(() => sent.push("你好"), 0));
    start();
    host.dispatchEvent(event("compositionend"));
    host.dispatchEvent(insertText("，"));
    host.dispatchEvent(insertText("！"));
    expect(sent).toEqual([]);
    vi.runAllTimers();
    expect(sent).toEqual(["你好", "，！"]);
    host.dispatchEvent(insertText("。"));
    expect(sent).toEqual(["你好", "，！", "。"]);
  });

  it("sends the waiting text as soon as the terminal sent the composition, before a key typed next", () => {
    start();
    host.dispatchEvent(event("compositionend"));
    host.dispatchEvent(insertText("文"));
    // A key typed now: xterm.js sends the composition at once, then the key.
    sent.push("中");
    committed.terminalSent();
    sent.push("o");
    vi.runAllTimers();
    expect(sent).toEqual(["中", "文", "o"]);
  });

  it("listens no more once disposed", () => {
    start();
    committed.dispose();
    const inserted = insertText("x");
    host.dispatchEvent(inserted);
    expect(sent).toEqual([]);
    expect(inserted.defaultPrevented).toBe(false);
  });
});
