// Requests to the real API server this aggregated server stands behind, as plain JSON with the
// kubeconfig's server and credentials: reading the front-proxy settings, SubjectAccessReviews for each
// request, and registering the APIServices. Every HTTP status resolves; only a failure to get an
// answer rejects, so callers word the API server's refusals themselves.
import https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";

export interface KubeAnswer {
  status: number;
  /** The parsed JSON body, or its text when it is not JSON. */
  body: unknown;
}

export type KubeRequest = (
  method: "GET" | "POST" | "PUT" | "PATCH",
  path: string,
  body?: unknown,
  contentType?: string,
) => Promise<KubeAnswer>;

/** The reason in a Kubernetes Status body, or the body itself. */
export function statusMessage(answer: KubeAnswer): string {
  const { body } = answer;
  if (typeof body === "object" && body !== null && "message" in body && typeof body.message === "string") {
    return body.message;
  }
  return typeof body === "string" ? body : JSON.stringify(body);
}

export function kubeRequester(kubeConfig: KubeConfig): KubeRequest {
  const server = kubeConfig.getCurrentCluster()?.server.replace(/\/+$/, "");
  if (server === undefined) throw new Error("the real API server's kubeconfig has no current cluster");
  // One keep-alive agent: a SubjectAccessReview per request should not cost a TLS handshake each.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 8 });
  return async (method, path, body, contentType = "application/json") => {
    const options: https.RequestOptions = { method, timeout: 10_000 };
    await kubeConfig.applyToHTTPSOptions(options);
    options.agent = agent;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    options.headers = {
      ...options.headers,
      accept: "application/json",
      ...(payload === undefined ? {} : { "content-type": contentType }),
    };
    return new Promise((resolve, reject) => {
      const request = https.request(`${server}${path}`, options, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text) as unknown;
          } catch {
            // Not JSON: keep the text.
          }
          resolve({ status: response.statusCode ?? 0, body: parsed });
        });
      });
      request.on("timeout", () => request.destroy(new Error(`${method} ${path}: timed out`)));
      request.on("error", reject);
      request.end(payload);
    });
  };
}
