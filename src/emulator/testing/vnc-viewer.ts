// Test helper: one viewer of KubeVirt's vnc subresource on an emulator, speaking RFB through the
// BFF's RfbClient, asking for every change as it comes.
import { eventually } from "../../common/testing/patience.ts";
import { RfbClient } from "../../server/screen/rfb-client.ts";
import type { Emulator } from "../emulator.ts";
import { openStream, type StreamClient } from "./websocket.ts";

export interface VncViewer {
  rfb: RfbClient;
  stream: StreamClient;
  /** Updates applied so far. */
  readonly updates: number;
  /** Presses and releases each keysym in turn. */
  type(keysyms: number[]): void;
}

export function vncPath(namespace: string, name: string, query = ""): string {
  return `/apis/subresources.kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/${name}/vnc${query}`;
}

/** The keysyms of plain ASCII text (Latin-1 keysyms are the characters' own codes). */
export function keysymsOf(text: string): number[] {
  return [...text].map((character) => character.charCodeAt(0));
}

const shiftKeysym = 0xffe1;
/** What a US keyboard types with Shift held. */
const shifted = /[A-Z~!@#$%^&*()_+{}|:"<>?]/;

/**
 * Types ASCII text as a VNC viewer on a US keyboard does: Shift pressed around the characters that
 * need it. QEMU makes scancodes of the keysyms and the guest's keymap reads Shift from its own key,
 * so a bare "$" keysym reaches a real guest as "4"; the sandboxed guests take either.
 */
export function typeText(viewer: VncViewer, text: string): void {
  for (const character of text) {
    const shift = shifted.test(character);
    if (shift) viewer.rfb.key(shiftKeysym, true);
    viewer.type(keysymsOf(character));
    if (shift) viewer.rfb.key(shiftKeysym, false);
  }
}

export async function openVncViewer(emulator: Emulator, path: string, timeoutMs: number): Promise<VncViewer> {
  const stream = await openStream(emulator, path);
  let updates = 0;
  let failure: string | undefined;
  const rfb: RfbClient = new RfbClient((bytes) => stream.send(bytes), {
    updated: () => {
      updates += 1;
      rfb.requestUpdate(true);
    },
    failed: (reason) => (failure = reason),
  });
  stream.ws.on("message", (data, isBinary) => {
    if (isBinary) rfb.receive(Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer));
  });
  await eventually(
    async () => {
      if (failure) throw new Error(`RFB failed: ${failure}`);
      return updates;
    },
    (count) => count > 0,
    { what: "a first framebuffer update", timeoutMs },
  );
  return {
    rfb,
    stream,
    get updates() {
      return updates;
    },
    type(keysyms) {
      for (const keysym of keysyms) {
        rfb.key(keysym, true);
        rfb.key(keysym, false);
      }
    },
  };
}
