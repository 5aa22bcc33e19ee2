// Opens one of KubeVirt's streaming subresources of a VMI (console, portforward/PORT, vnc...): a
// websocket under the subprotocol plain.kubevirt.io, with the same credentials and TLS as every
// other cluster call. What flows over it is the caller's business.
import type { IncomingMessage } from "node:http";
import type { KubeConfig } from "@kubernetes/client-node";
import WebSocket from "ws";
import { apiUrl } from "./api-url.ts";
import { ClusterUnavailableError, KubeStatusError } from "./errors.ts";

/** KubeVirt's only stream subprotocol; virt-api also accepts none, but proxies prefer one. */
const kubevirtSubprotocol = "plain.kubevirt.io";
const maxRefusalBytes = 64 * 1024;

/**
 * Resolves with the websocket once virt-api accepted it. Rejects with KubeStatusError when the
 * cluster refused (its Status or virt-api's text as the message), with ClusterUnavailableError when
 * it did not answer, and with the signal's reason when aborted.
 */
export async function openVmiWebSocket(input: {
  kubeConfig: KubeConfig;
  namespace: string;
  vmiName: string;
  /** The path after the VMI's name, e.g. "console" or "portforward/899". */
  subresource: string;
  options?: WebSocket.ClientOptions;
  signal: AbortSignal;
}): Promise<WebSocket> {
  const { kubeConfig, namespace, vmiName, subresource, signal } = input;
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) throw new ClusterUnavailableError(new Error("the kubeconfig names no cluster server"));
  const url = apiUrl(
    server,
    `/apis/subresources.kubevirt.io/v1/namespaces/${encodeURIComponent(namespace)}` +
      `/virtualmachineinstances/${encodeURIComponent(vmiName)}/${subresource}`,
  );
  url.protocol = url.protocol === "http:" ? "ws:" : "wss:";
  const options: WebSocket.ClientOptions = { ...input.options };
  await kubeConfig.applyToHTTPSOptions(options);
  signal.throwIfAborted();
  return whenOpen(new WebSocket(url, [kubevirtSubprotocol], options), signal);
}

function whenOpen(socket: WebSocket, signal: AbortSignal): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const finish = (outcome: () => void) => {
      signal.removeEventListener("abort", onAbort);
      socket.off("open", onOpen).off("error", onError).off("unexpected-response", onRefused);
      outcome();
    };
    const onOpen = () => finish(() => resolve(socket));
    const onError = (error: Error) => finish(() => reject(new ClusterUnavailableError(error)));
    const onRefused = (request: { destroy(): void }, response: IncomingMessage) => {
      void readLimited(response).then((body) => {
        request.destroy();
        finish(() => reject(refusal(response.statusCode ?? 0, body)));
      });
    };
    const onAbort = () => {
      socket.terminate();
      finish(() => reject(signal.reason));
    };
    socket.on("open", onOpen).on("error", onError).on("unexpected-response", onRefused);
    // A late error (after the outcome is settled) must not crash the process; the owner of an open
    // socket hears of it through "close", which always follows.
    socket.on("error", () => {});
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function readLimited(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => resolve(Buffer.concat(chunks).toString("utf8"));
    response.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxRefusalBytes) chunks.push(chunk);
    });
    response.on("end", done);
    response.on("error", done);
  });
}

/** The API answers with a metav1.Status; virt-api's own failures are sometimes plain text. */
function refusal(status: number, body: string): KubeStatusError {
  let reason = "";
  let message = body.trim().slice(0, 500);
  try {
    const parsed = JSON.parse(body) as { message?: unknown; reason?: unknown };
    if (typeof parsed.message === "string") message = parsed.message;
    if (typeof parsed.reason === "string") reason = parsed.reason;
  } catch {
    // Not JSON: the text itself is the message.
  }
  return new KubeStatusError(status, reason, message);
}
