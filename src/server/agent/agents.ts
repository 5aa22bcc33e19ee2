// Everything the BFF's features need of the lab agent, built once: the keys (derived from one
// secret, so every replica has the same), the way to reach a VM's agent port, the client on top of
// it, and the agent's part of a session's cloud-init. Grading, sizing, idle activity and warm claims
// use the client; files and terminals open connections of their own with the same key.
import type { PortForwarder } from "../kube/portforward.ts";
import { createAgentClient, type AgentClient, type ConnectToAgent } from "./client.ts";
import { createAgentDelivery, type AgentUserData } from "./delivery.ts";
import { agentKey, warmAgentKey } from "./key.ts";
import { createPortForwardTransport, type BootLogReader } from "./portforward-transport.ts";

export interface AgentsDeps {
  /** AGENT_TOKEN_SECRET: every key derives from it. */
  keySecret: string;
  /** src/agent/lab_agent/ as one zip (agent-file.ts), delivered into every new VM. */
  agentFile: Buffer;
  /** Reaches a VM's agent port. Default: the cluster's port-forward. */
  connect?: ConnectToAgent;
  portForward: PortForwarder;
  /** For the port-forward: the session's boot log explains an agent that does not listen. */
  readBootLog: BootLogReader;
}

export interface Agents {
  client: AgentClient;
  connect: ConnectToAgent;
  /** A session's key: agentKey(secret, sessionId). */
  keyFor: (sessionId: string) => string;
  /** A warm VM's key until a launch claims it. */
  warmKeyFor: (vmName: string) => string;
  /** The agent's part of a session's cloud-init user data. */
  sessionUserData: AgentUserData;
}

export function createAgents(deps: AgentsDeps): Agents {
  const keyFor = (sessionId: string) => agentKey(deps.keySecret, sessionId);
  const warmKeyFor = (vmName: string) => warmAgentKey(deps.keySecret, vmName);
  const connect =
    deps.connect ?? createPortForwardTransport(deps.portForward, { readBootLog: deps.readBootLog });
  return {
    client: createAgentClient({ connect, keyFor, warmKeyFor }),
    connect,
    keyFor,
    warmKeyFor,
    sessionUserData: createAgentDelivery(deps.agentFile, keyFor),
  };
}
