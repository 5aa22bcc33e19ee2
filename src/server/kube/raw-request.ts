// A request with the kubeconfig's credentials and CA for the paths the generated client has no call
// for (KubeVirt's lifecycle subresources). Answers other than 2xx become KubeStatusError with the
// Status's message; no answer becomes ClusterUnavailableError.
import { request as httpsRequest, type RequestOptions } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { apiUrl } from "./api-url.ts";
import { ClusterUnavailableError, KubeStatusError } from "./errors.ts";
import { applyToRequestOptions } from "./kept-alive.ts";

const timeoutMs = 15_000;
const maxAnswerBytes = 1024 * 1024;

export async function sendRaw(
  kubeConfig: KubeConfig,
  method: "GET" | "PUT",
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) throw new Error("the kubeconfig names no cluster server");
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const options: RequestOptions = {
    method,
    headers: {
      accept: "application/json",
      ...(payload ? { "content-type": "application/json", "content-length": payload.length } : {}),
    },
  };
  await applyToRequestOptions(kubeConfig, options);
  const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = httpsRequest(apiUrl(server, path), options, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxAnswerBytes)
          request.destroy(new Error(`${path} answered more than ${maxAnswerBytes} bytes`));
        else chunks.push(chunk);
      });
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
      response.on("error", reject);
    });
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`${method} ${path} timed out`)));
    request.on("error", (error) => reject(new ClusterUnavailableError(error)));
    request.end(payload);
  });
  if (answer.status >= 200 && answer.status < 300) return answer;
  throw statusError(answer);
}

function statusError({ status, text }: { status: number; text: string }): KubeStatusError {
  try {
    const parsed = JSON.parse(text) as { reason?: unknown; message?: unknown };
    return new KubeStatusError(
      status,
      typeof parsed.reason === "string" ? parsed.reason : "",
      typeof parsed.message === "string" ? parsed.message : text,
    );
  } catch {
    return new KubeStatusError(status, "", text || `the cluster answered ${status}`);
  }
}
