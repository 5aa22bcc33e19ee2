// Reaches a session's grading agent through the cluster's port-forward into its VM (kube/portforward.ts),
// and says in plain words why when the cluster refuses.
import { agentDefaultPort } from "../../common/agent-protocol.ts";
import { ClusterUnavailableError, KubeStatusError } from "../kube/errors.ts";
import type { PortForwarder } from "../kube/portforward.ts";
import { AgentUnreachableError, type ConnectToAgent } from "./agent-client.ts";
import { abortableDelay } from "./abortable-delay.ts";

export interface PortForwardTransportOptions {
  /** The agent's port inside the guest. */
  port?: number;
  /**
   * A VM reports Running before its agent listens: for this long a refused connection is tried
   * again, so a check right after boot waits a moment instead of failing. Default 5 s.
   */
  agentStartMs?: number;
  /** Between those tries. Default 250 ms. */
  retryEveryMs?: number;
}

export function createPortForwardTransport(
  forward: PortForwarder,
  options: PortForwardTransportOptions = {},
): ConnectToAgent {
  const port = options.port ?? agentDefaultPort;
  const agentStartMs = options.agentStartMs ?? 5000;
  const retryEveryMs = options.retryEveryMs ?? 250;
  return async (sessionId, signal) => {
    const giveUpAt = Date.now() + agentStartMs;
    for (;;) {
      try {
        return await forward(sessionId, port, signal);
      } catch (error) {
        if (signal.aborted) throw error;
        if (isRefusedPort(error) && Date.now() + retryEveryMs < giveUpAt) {
          await abortableDelay(retryEveryMs, signal);
          continue;
        }
        throw explain(sessionId, error);
      }
    }
  };
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
  if (isRefusedPort(error)) {
    return "The grading agent in the VM does not answer: it is still starting (a few seconds after the VM boots) or it was stopped. Try again in a moment.";
  }
  if (status === 500) return `The VM did not accept a connection to its grading agent${why}.`;
  return `The cluster refused the port-forward to the VM (HTTP ${status}${why}).`;
}
