// Test helper: opens one of KubeVirt's websocket streams (console, portforward) on an emulator, as a
// client would (bearer token, the emulator's CA, `plain.kubevirt.io`), and collects what arrives.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import WebSocket, { type ClientOptions } from "ws";
import { patient } from "../../common/testing/patience.ts";
import type { Emulator } from "../emulator.ts";

export interface StreamClient {
  ws: WebSocket;
  /** The subprotocol the server chose ("" for none). */
  protocol: string;
  /** Everything received so far (binary frames), as latin1 text. */
  readonly text: string;
  /** Resolves with the close code (1006 when the connection was cut without a close frame). */
  closed: Promise<number>;
  /** Sends bytes in a binary frame. */
  send(data: string | Buffer): void;
  /** Resolves once the received text matches; rejects after timeoutMs, showing what did arrive. */
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  /** Forget what was received so far. */
  clear(): void;
}

export interface StreamOptions {
  /** Default: the admin token. */
  token?: string;
  /** Default: ["plain.kubevirt.io"]. */
  protocols?: string[];
  /** Options for the ws client, e.g. autoPong: false. */
  client?: ClientOptions;
}

export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`the upgrade was refused with HTTP ${status}: ${body}`);
  }
}

export function emulatorCa(emulator: Emulator): string {
  const config = parseYaml(readFileSync(emulator.kubeconfigPath, "utf8")) as {
    clusters: { cluster: { "certificate-authority-data": string } }[];
  };
  return Buffer.from(config.clusters[0]?.cluster["certificate-authority-data"] ?? "", "base64").toString(
    "utf8",
  );
}

/** Opens `path` (e.g. /apis/subresources.kubevirt.io/v1/namespaces/x/virtualmachineinstances/y/console). */
export function openStream(
  emulator: Emulator,
  path: string,
  options: StreamOptions = {},
): Promise<StreamClient> {
  const url = new URL(path, emulator.url.replace(/^https:/, "wss:"));
  const ws = new WebSocket(url, options.protocols ?? ["plain.kubevirt.io"], {
    ca: emulatorCa(emulator),
    headers: { authorization: `Bearer ${options.token ?? emulator.adminToken}` },
    ...options.client,
  });
  let text = "";
  const waiters = new Set<() => void>();
  ws.on("message", (data, isBinary) => {
    if (!isBinary) return;
    text += Buffer.isBuffer(data)
      ? data.toString("latin1")
      : Buffer.from(data as ArrayBuffer).toString("latin1");
    for (const waiter of waiters) waiter();
  });
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    ws.once("unexpected-response", (_request, response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        reject(new UpgradeRefused(response.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"))),
      );
    });
    ws.once("error", reject);
    ws.once("open", () => {
      ws.off("error", reject);
      // Errors after the handshake show up as the close code.
      ws.on("error", () => undefined);
      resolve({
        ws,
        protocol: ws.protocol,
        get text() {
          return text;
        },
        closed,
        send: (data) =>
          ws.send(typeof data === "string" ? Buffer.from(data, "utf8") : data, { binary: true }),
        waitFor: (pattern, timeoutMs = 5000) => {
          const regex =
            typeof pattern === "string"
              ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
              : pattern;
          if (regex.test(text)) return Promise.resolve(text);
          return new Promise<string>((resolveWait, rejectWait) => {
            const check = () => {
              if (!regex.test(text)) return;
              waiters.delete(check);
              clearTimeout(timer);
              resolveWait(text);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              rejectWait(
                new Error(
                  `stream output did not match ${regex} within ${timeoutMs} ms; got:\n${text.slice(-2000)}`,
                ),
              );
            }, patient(timeoutMs));
            waiters.add(check);
          });
        },
        clear: () => {
          text = "";
        },
      });
    });
  });
}
