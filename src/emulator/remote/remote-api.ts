// Requests and watches against the real API server the emulator stands beside (`--apiserver`), as
// plain JSON over one keep-alive agent (the timers and a SubjectAccessReview per aggregated request
// should not cost a TLS handshake each), with the kubeconfig's server and credentials.
import https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { isJsonObject, type KubeObject } from "../cluster/objects.ts";
import type { ResourceType } from "../cluster/resources.ts";

export interface RemoteAnswer {
  status: number;
  body: unknown;
}

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: KubeObject;
}

/** One request; every HTTP status resolves, only a failure to get an answer rejects. */
export type KubeRequest = (
  method: string,
  path: string,
  body?: unknown,
  contentType?: string,
) => Promise<RemoteAnswer>;

/** The reason in a Kubernetes Status body, or the body itself. */
export function statusMessage(answer: RemoteAnswer): string {
  const { body } = answer;
  if (isJsonObject(body) && typeof body.message === "string") return body.message;
  return typeof body === "string" ? body : JSON.stringify(body);
}

/** The path of a kind's collection (namespace "" for all namespaces), an object, or its subresource. */
export function resourcePath(
  resource: ResourceType,
  namespace: string,
  name?: string,
  subresource?: string,
): string {
  const root =
    resource.group === "" ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  const scope = resource.namespaced && namespace !== "" ? `/namespaces/${namespace}` : "";
  const item = name === undefined ? "" : `/${name}${subresource ? `/${subresource}` : ""}`;
  return `${root}${scope}/${resource.plural}${item}`;
}

export class RemoteApi {
  private readonly agent = new https.Agent({ keepAlive: true, maxSockets: 8 });
  /** Watches hold their connection for minutes: their own agent, so requests never queue behind them. */
  private readonly watchAgent = new https.Agent({ keepAlive: false });
  readonly server: string;

  constructor(private readonly kubeConfig: KubeConfig) {
    const server = kubeConfig.getCurrentCluster()?.server;
    if (server === undefined) throw new Error("the API server's kubeconfig has no current cluster");
    this.server = server.replace(/\/+$/, "");
  }

  readonly request: KubeRequest = async (
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ) => {
    const options = await this.options(method);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    options.headers = {
      ...options.headers,
      accept: "application/json",
      // Always a length: Node sends a DELETE's body without one (nor chunked), and the server would
      // read it as the start of the next request on the kept-alive connection.
      ...(payload === undefined
        ? {}
        : {
            "content-type": contentType ?? "application/json",
            "content-length": Buffer.byteLength(payload),
          }),
    };
    options.timeout = 30_000;
    return new Promise((resolve, reject) => {
      const request = https.request(`${this.server}${path}`, options, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => {
          let parsed: unknown = text;
          try {
            parsed = text === "" ? undefined : JSON.parse(text);
          } catch {
            // Not JSON: keep the text for the error message.
          }
          resolve({ status: response.statusCode ?? 0, body: parsed });
        });
        // A connection dropped mid-answer ends neither with "end" nor with the request's "error".
        response.on("aborted", () => reject(new Error(`${method} ${path}: the answer was cut off`)));
        response.on("error", reject);
      });
      request.on("timeout", () => request.destroy(new Error(`${method} ${path} timed out`)));
      request.on("error", reject);
      request.end(payload);
    });
  };

  /**
   * Watches a collection from a resourceVersion, one call of `onEvent` per event, until the server
   * ends the watch (resolves) or the signal aborts it. Rejects when no watch could be opened.
   */
  async watch(
    path: string,
    resourceVersion: string,
    onEvent: (event: WatchEvent) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const options = await this.options("GET");
    options.agent = this.watchAgent;
    options.headers = { ...options.headers, accept: "application/json" };
    options.signal = signal;
    const query = `?watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}`;
    return new Promise((resolve, reject) => {
      const request = https.request(`${this.server}${path}${query}`, options, (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`watch ${path}: HTTP ${response.statusCode}`));
          return;
        }
        let buffered = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          buffered += chunk;
          try {
            for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
              const line = buffered.slice(0, end).trim();
              buffered = buffered.slice(end + 1);
              if (line !== "") onEvent(JSON.parse(line) as WatchEvent);
            }
          } catch (error) {
            // A line that is no event, or a listener that failed on one: this watch is over.
            request.destroy();
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
        response.on("end", () => resolve());
        response.on("aborted", () => resolve());
        response.on("error", () => resolve());
      });
      request.on("error", (error) => (signal.aborted ? resolve() : reject(error)));
      request.end();
    });
  }

  close(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
  }

  private async options(method: string): Promise<https.RequestOptions> {
    const options: https.RequestOptions = { method, agent: this.agent };
    await this.kubeConfig.applyToHTTPSOptions(options);
    // applyToHTTPSOptions may set its own agent; the keep-alive one is what makes timers cheap.
    options.agent = this.agent;
    return options;
  }
}
