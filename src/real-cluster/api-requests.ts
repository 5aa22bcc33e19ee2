// Requests to the real API server with a kubeconfig's server and credentials, as plain JSON on
// purpose: client-node's typed models serialize a CRD's schema through their own field names and
// silently drop the x-kubernetes-* keys they do not list (x-kubernetes-int-or-string inside
// `properties`), and the API server then refuses the CRD.
import https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { SetupError } from "./setup-error.ts";

export interface ApiAnswer {
  status: number;
  text: string;
}

/** One request; any HTTP status resolves, only a failure to get an answer rejects. */
export async function apiRequest(
  kubeConfig: KubeConfig,
  method: "GET" | "POST",
  apiPath: string,
  body?: unknown,
): Promise<ApiAnswer> {
  const server = kubeConfig.getCurrentCluster()?.server;
  if (server === undefined) throw new Error("the kubeconfig has no current cluster");
  const options: https.RequestOptions = { method, timeout: 10_000 };
  await kubeConfig.applyToHTTPSOptions(options);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  options.headers = {
    ...options.headers,
    accept: "application/json",
    ...(payload === undefined ? {} : { "content-type": "application/json" }),
  };
  return new Promise((resolve, reject) => {
    const request = https.request(`${server}${apiPath}`, options, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on("timeout", () => request.destroy(new Error("timed out")));
    request.on("error", reject);
    request.end(payload);
  });
}

/** A create that must succeed: the created object, or the API server's own reason for refusing. */
export async function createObject(
  kubeConfig: KubeConfig,
  collectionPath: string,
  object: unknown,
  what: string,
): Promise<unknown> {
  const { status, text } = await apiRequest(kubeConfig, "POST", collectionPath, object);
  if (status >= 200 && status < 300) return JSON.parse(text) as unknown;
  let message = text;
  try {
    message = (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    // Not a Status: keep the text.
  }
  throw new SetupError(`Creating ${what} was refused (HTTP ${status}): ${message}`);
}
