// One call to the Kubernetes API as the console makes it: its outcome counted (requests by verb and
// status, for /metrics and the benches), and any failure in our two terms: the API server answered
// with a Status (KubeStatusError), or it did not answer (ClusterUnavailableError).
import { ApiException } from "@kubernetes/client-node";
import { ClusterUnavailableError, KubeStatusError } from "./errors.ts";
import type { KubeOutcome, KubeRequestCounter, KubeVerb } from "./request-counter.ts";
import { WatchRefusedError } from "./watch-request.ts";
import type { WriteRate } from "./write-rate.ts";

export type KubeCall<T> = () => Promise<{ httpStatusCode: number; data: T }>;

const writeVerbs: ReadonlySet<KubeVerb> = new Set(["create", "update", "patch", "delete"]);

/**
 * Runs client-node calls, each counted under its verb; a failure is thrown translated. Writes wait
 * their turn on `writes` when given.
 */
export function countedCalls(counter: KubeRequestCounter | undefined, writes?: WriteRate) {
  return async function send<T>(verb: KubeVerb, call: KubeCall<T>): Promise<T> {
    if (writes && writeVerbs.has(verb)) await writes.take();
    try {
      const answer = await call();
      counter?.record(verb, answer.httpStatusCode);
      return answer.data;
    } catch (error) {
      const translated = translate(error);
      counter?.record(verb, outcomeOf(translated));
      throw translated;
    }
  };
}

/** Any failure of a call to the API as KubeStatusError (it answered) or ClusterUnavailableError (it did not). */
export function translate(error: unknown): KubeStatusError | ClusterUnavailableError {
  if (error instanceof KubeStatusError || error instanceof ClusterUnavailableError) return error;
  if (error instanceof ApiException) return statusError(error.body, error.code);
  if (error instanceof WatchRefusedError) return statusError(error.body, error.statusCode);
  return new ClusterUnavailableError(error);
}

export function outcomeOf(error: unknown): KubeOutcome {
  return error instanceof KubeStatusError ? error.statusCode : "error";
}

interface StatusBody {
  code?: number;
  reason?: string;
  message?: string;
}

/** A Status body (JSON text or parsed) as an error; `fallbackCode` when it names no code. */
export function statusError(body: unknown, fallbackCode: number): KubeStatusError {
  let status: StatusBody = {};
  if (typeof body === "string") {
    try {
      status = JSON.parse(body) as StatusBody;
    } catch {
      status = {};
    }
  } else if (body && typeof body === "object") {
    status = body as StatusBody;
  }
  const code = typeof status.code === "number" ? status.code : fallbackCode;
  return new KubeStatusError(code, status.reason ?? "", status.message ?? `HTTP ${code}`);
}
