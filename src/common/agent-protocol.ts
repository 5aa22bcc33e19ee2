// The wire format between the BFF and the grading agent inside a guest (HTTP/1.1 + JSON), as
// src/agent/lab_agent/ speaks it; the contract suite (src/agent/contract.test.ts) holds the two
// together. The zod schemas that validate these bodies on the BFF side live in grading.ts.

/**
 * The agent's TCP port inside the guest; the BFF reaches it through KubeVirt's portforward
 * subresource. Below 1024, so no process of the student's can listen there.
 */
export const agentPort = 899;

export const agentLimits = {
  /** Request bodies above this are refused with 413. */
  bodyBytes: 64 * 1024,
  checksPerRequest: 100,
  checkIdLength: 100,
  commandLength: 16 * 1024,
  timeoutSeconds: 3600,
  /** Output kept per check (stdout and stderr interleaved); the tail is kept, the head dropped. */
  outputBytes: 64 * 1024,
  /** Checks that run at the same time, over all requests. */
  concurrentChecks: 4,
  ttySize: 1000,
} as const;

export interface AgentCheckSpec {
  id: string;
  /** A shell command line, run by `bash --noprofile --norc -c` (or `sh -c` where bash is missing). */
  run: string;
  /** After this the check's whole process group is killed. Fractions are allowed. */
  timeoutSeconds: number;
}

export interface AgentCheckRequest {
  checks: AgentCheckSpec[];
}

export interface AgentCheckResult {
  id: string;
  /** null when the command was ended by a signal (see `signal`). */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** stdout and stderr as they arrived, at most agentLimits.outputBytes (the tail). */
  output: string;
  outputTruncated: boolean;
  durationMs: number;
  /** From a last stdout line `score=<0..1>`, else null. */
  score: number | null;
}

/** Results come back in the order of the request's checks. */
export interface AgentCheckResponse {
  results: AgentCheckResult[];
}

export interface AgentHealth {
  status: "ok";
  version: string;
  /** Whom checks run as, and where. */
  runAs: { user: string; home: string };
}

/** GET /v1/activity (agent 2.3.0): what the agent sees of the student at work, for idle handling. */
export interface AgentActivity {
  /** CPU seconds used by the student's processes alive now and the children they waited for; checks not counted. */
  cpuSeconds: number;
  /** The student's processes alive now. */
  processes: number;
  /** Logins on terminals other than the serial console's autologin (ssh, say), from utmp. */
  logins: { user: string; tty: string; idleSeconds: number }[];
}

export interface AgentTtySize {
  rows: number;
  cols: number;
}

export type AgentErrorCode =
  | "unauthenticated"
  | "no_key"
  | "not_found"
  | "method_not_allowed"
  | "too_large"
  | "invalid"
  | "run_as_unavailable"
  | "spawn_failed"
  | "tty_failed"
  | "invalid_path"
  | "outside_home"
  | "no_such_file"
  | "no_such_folder"
  | "not_a_file"
  | "permission_denied"
  | "disk_full"
  | "file_failed"
  | "internal";

export interface AgentErrorBody {
  error: { code: AgentErrorCode; message: string };
}
