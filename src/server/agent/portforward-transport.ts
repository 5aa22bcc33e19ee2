// Reaches a session's lab agent through the cluster's port-forward into its VM (kube/portforward.ts),
// and says in plain words why when the cluster refuses.
import { agentPort } from "../../common/agent-protocol.ts";
import { ClusterUnavailableError, KubeStatusError } from "../kube/errors.ts";
import type { PortForwarder } from "../kube/portforward.ts";
import { type ConnectToAgent } from "./client.ts";
import { AgentUnreachableError } from "./errors.ts";
import { abortableDelay } from "./abortable-delay.ts";
import { agentNotStartedMarker } from "./delivery.ts";

/** Why nothing listens on the agent's port (docs/grading.md, "When a session is not gradable"). */
export const notListeningReasons = {
  starting: "Your VM is still starting its grading agent. Try again in a minute.",
  noPython:
    "This VM's image has no /usr/bin/python3, which the grading agent needs; ask the lab's author for an image that runs cloud-init.",
} as const;

/** A paused VM's agent cannot be reached: virt-api refuses its port-forward (docs/grading.md). */
export const pausedReason = "Your VM is paused. Resume it on its session page, then try again.";

/** The lines a session's VM printed on its serial console so far, as the cluster keeps them. */
export type BootLogReader = (sessionId: string) => Promise<readonly string[]>;

export interface PortForwardTransportOptions {
  /** The agent's port inside the guest. Default agentPort (899). */
  port?: number;
  /**
   * A refused connection is tried again for this long, for a check that comes a moment before the
   * agent listens, or a moment after the VM was resumed (virt-api goes on refusing a VMI as paused
   * until virt-handler's next sync clears its Paused condition). Short: a guest still running
   * cloud-init takes 30 to 120 s after the VM reports Running, and a grading run must not wait that
   * long per session. Default 3 s.
   */
  agentStartMs?: number;
  /** Between those tries. Default 250 ms. */
  retryEveryMs?: number;
  /**
   * Tells a guest that cannot start the agent (cloud-init printed agentNotStartedMarker) from one
   * still starting it. Without it, or when it fails, a refused port means "still starting".
   */
  readBootLog?: BootLogReader;
  /** How long reading the boot log may take before "still starting" is said without it. Default 3 s. */
  bootLogTimeoutMs?: number;
}

export function createPortForwardTransport(
  forward: PortForwarder,
  options: PortForwardTransportOptions = {},
): ConnectToAgent {
  const port = options.port ?? agentPort;
  const agentStartMs = options.agentStartMs ?? 3000;
  const retryEveryMs = options.retryEveryMs ?? 250;
  const bootLogTimeoutMs = options.bootLogTimeoutMs ?? 3000;

  /** Nothing listens on the port, after the retries. */
  async function notListening(sessionId: string, signal: AbortSignal): Promise<AgentUnreachableError> {
    const lines = options.readBootLog
      ? await withinTime(options.readBootLog(sessionId), bootLogTimeoutMs, signal)
      : undefined;
    signal.throwIfAborted();
    const cannotStart = lines?.some((line) => line.includes(agentNotStartedMarker)) ?? false;
    return new AgentUnreachableError(
      cannotStart ? notListeningReasons.noPython : notListeningReasons.starting,
    );
  }

  return async (sessionId, signal) => {
    const giveUpAt = Date.now() + agentStartMs;
    for (;;) {
      try {
        return await forward(sessionId, port, signal);
      } catch (error) {
        if (signal.aborted) throw error;
        const paused = isPausedVmi(error);
        if (!paused && !isRefusedPort(error)) throw explain(sessionId, error);
        if (Date.now() + retryEveryMs >= giveUpAt) {
          throw paused ? new AgentUnreachableError(pausedReason) : await notListening(sessionId, signal);
        }
        await abortableDelay(retryEveryMs, signal);
      }
    }
  };
}

/** The reader's answer, or undefined when it failed, took longer than `ms` or the signal aborted. */
async function withinTime<T>(work: Promise<T>, ms: number, signal: AbortSignal): Promise<T | undefined> {
  const finished = new AbortController();
  const timeout = abortableDelay(ms, AbortSignal.any([signal, finished.signal])).then(
    () => undefined,
    () => undefined,
  );
  try {
    return await Promise.race([work.catch(() => undefined), timeout]);
  } finally {
    finished.abort();
  }
}

/** virt-api refuses a port-forward while the VMI has the Paused condition (portforward.go 52-58). */
function isPausedVmi(error: unknown): boolean {
  return error instanceof KubeStatusError && error.statusCode === 409 && /VMI is paused/.test(error.message);
}

/** virt-api dialled the VM and nothing listens on the port. */
function isRefusedPort(error: unknown): error is KubeStatusError {
  return (
    error instanceof KubeStatusError && error.statusCode === 500 && /connection refused/i.test(error.message)
  );
}

function explain(sessionId: string, error: unknown): unknown {
  if (error instanceof KubeStatusError) return new AgentUnreachableError(explainRefusal(sessionId, error));
  if (error instanceof ClusterUnavailableError) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
    return new AgentUnreachableError(`The cluster cannot be reached for the port-forward${cause}.`);
  }
  return error;
}

function explainRefusal(sessionId: string, error: KubeStatusError): string {
  const why = error.message ? `: ${error.message}` : "";
  const status = error.statusCode;
  if (status === 404) return `The VM ${sessionId} has no running instance to connect to${why}.`;
  if (status === 401 || status === 403) {
    return `The cluster refused the console's port-forward to the VM (HTTP ${status}${why}); an operator must check its permissions.`;
  }
  if (status === 409) return `The VM cannot be reached right now${why}.`;
  if (status === 500) return `The VM did not accept a connection to its grading agent${why}.`;
  return `The cluster refused the port-forward to the VM (HTTP ${status}${why}).`;
}
