// What every request meets before the API server proper: the fault API (when enabled), then any
// injected delay or failure. Requests to the fault API itself are never delayed or failed.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Handlers } from "../http/handlers.ts";
import { isFaultApiRequest } from "./fault-api.ts";
import { failUpgrade, sendFailure, type RequestFaults } from "./request-faults.ts";

export function withFaults(
  api: Handlers,
  requests: RequestFaults,
  faultApi: ((request: IncomingMessage, response: ServerResponse) => void) | undefined,
): Handlers {
  const later = (delayMs: number, step: () => void) => {
    if (delayMs > 0) setTimeout(step, delayMs);
    else step();
  };
  return {
    onRequest: (request, response) => {
      if (faultApi && isFaultApiRequest(request)) return faultApi(request, response);
      const { delayMs, failure } = requests.next();
      later(delayMs, () => {
        if (failure) sendFailure(response, failure);
        else api.onRequest(request, response);
      });
    },
    onUpgrade: (request, socket, head) => {
      const { delayMs, failure } = requests.next();
      later(delayMs, () => {
        if (socket.destroyed) return;
        if (failure) failUpgrade(socket, failure);
        else api.onUpgrade(request, socket, head);
      });
    },
  };
}
