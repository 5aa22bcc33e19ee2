// How asking the lab agent fails, in its own module since every way of asking (the client, the
// streamed answers of files and terminals, the port-forward transport) ends in the same few errors.

/** The agent could not be asked, or did not answer properly: infrastructure, never a grade. */
export class AgentUnreachableError extends Error {
  readonly code: "unreachable" | "unverified" = "unreachable";
}

/**
 * Something answered, but not with this session's key: whatever it said is not the agent's word.
 * The reason is one of a few fixed texts, never the answer's own message.
 */
export class AgentUnverifiedError extends AgentUnreachableError {
  override readonly code = "unverified";
  constructor(
    message: string,
    /** The HTTP status of the answer that did not verify. */
    readonly status: number,
  ) {
    super(message);
  }
}

/** The agent, proven, said no: `agentCode` is its error code (docs/agent.md, "Errors and limits"). */
export class AgentRefusedError extends AgentUnreachableError {
  constructor(
    message: string,
    readonly agentCode: string,
  ) {
    super(message);
  }
}

/** The reasons for answers that did not verify (docs/grading.md, "When a session is not gradable"). */
export const unverifiedReasons = {
  signatureRefused:
    "The VM's grading agent did not accept the console's signature (its key differs from this server's; was AGENT_TOKEN_SECRET changed after the VM started?).",
  noKey: "The VM's grading agent has no key yet; your VM is still starting its grading agent.",
  unproven:
    "The VM's grading agent could not prove itself: its answer was not signed with this session's key.",
} as const;
