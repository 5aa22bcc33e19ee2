// The part of noVNC 1.7's RFB (core/rfb.js, docs/API.md) the screen uses; the package ships no types.
declare module "@novnc/novnc" {
  /** What noVNC needs of a WebSocket-like channel (core/websock.js, attach). */
  export interface RfbChannel {
    send(data: ArrayBuffer | ArrayBufferView): void;
    close(): void;
    binaryType: BinaryType;
    readonly protocol: string;
    readonly readyState: number | string;
    onopen: ((event: Event) => void) | null;
    onerror: ((event: Event) => void) | null;
    onmessage: ((event: { data: ArrayBuffer }) => void) | null;
    onclose: ((event: { code: number; reason: string; wasClean: boolean }) => void) | null;
  }

  export interface RfbEvents {
    connect: CustomEvent<Record<string, never>>;
    /** `clean`: false after a failure of noVNC's own (a protocol error). */
    disconnect: CustomEvent<{ clean: boolean }>;
    desktopname: CustomEvent<{ name: string }>;
  }

  export default class RFB {
    /** Appends its screen (a div holding the canvas) to `target` at once. */
    constructor(target: HTMLElement, urlOrChannel: string | RfbChannel, options?: { shared?: boolean });
    viewOnly: boolean;
    scaleViewport: boolean;
    clipViewport: boolean;
    resizeSession: boolean;
    showDotCursor: boolean;
    focusOnClick: boolean;
    background: string;
    disconnect(): void;
    sendCtrlAltDel(): void;
    /** Down and up when `down` is left out; `code` is KeyboardEvent.code. Ignored while viewOnly. */
    sendKey(keysym: number, code: string | null, down?: boolean): void;
    focus(options?: FocusOptions): void;
    blur(): void;
    addEventListener<K extends keyof RfbEvents>(type: K, listener: (event: RfbEvents[K]) => void): void;
    removeEventListener<K extends keyof RfbEvents>(type: K, listener: (event: RfbEvents[K]) => void): void;
  }
}
