// Request bodies checked by hand: the agent may use nothing beyond Node's built-ins (no zod here).
import {
  agentLimits,
  type AgentCheckRequest,
  type AgentCheckSpec,
  type AgentTtySize,
} from "../common/agent-protocol.ts";
import { HttpError } from "./http-io.ts";

export function parseCheckRequest(body: unknown): AgentCheckRequest {
  const problems: string[] = [];
  const checks = isObject(body) ? body.checks : undefined;
  if (!Array.isArray(checks) || checks.length === 0 || checks.length > agentLimits.checksPerRequest) {
    throw invalid([`"checks" must be a list of 1 to ${agentLimits.checksPerRequest} checks.`]);
  }
  const seen = new Set<string>();
  const parsed: AgentCheckSpec[] = [];
  checks.forEach((check: unknown, index) => {
    const where = `checks[${index}]`;
    if (!isObject(check)) {
      problems.push(`${where} must be an object.`);
      return;
    }
    const { id, run, timeoutSeconds } = check;
    if (typeof id !== "string" || id.length === 0 || id.length > agentLimits.checkIdLength) {
      problems.push(`${where}.id must be a string of 1 to ${agentLimits.checkIdLength} characters.`);
    } else if (seen.has(id)) problems.push(`${where}.id "${id}" appears twice.`);
    else seen.add(id);
    if (typeof run !== "string" || run.trim() === "" || run.length > agentLimits.commandLength) {
      problems.push(`${where}.run must be a command of 1 to ${agentLimits.commandLength} characters.`);
    }
    if (
      typeof timeoutSeconds !== "number" ||
      !(timeoutSeconds > 0) ||
      timeoutSeconds > agentLimits.timeoutSeconds
    ) {
      problems.push(
        `${where}.timeoutSeconds must be a number above 0 and at most ${agentLimits.timeoutSeconds}.`,
      );
    }
    parsed.push({ id, run, timeoutSeconds } as AgentCheckSpec);
  });
  if (problems.length > 0) throw invalid(problems);
  return { checks: parsed };
}

export function parseTtySize(body: unknown): AgentTtySize {
  const isSize = (value: unknown): value is number =>
    Number.isInteger(value) && (value as number) >= 1 && (value as number) <= agentLimits.ttySize;
  if (!isObject(body) || !isSize(body.rows) || !isSize(body.cols)) {
    throw invalid([`"rows" and "cols" must be whole numbers from 1 to ${agentLimits.ttySize}.`]);
  }
  return { rows: body.rows, cols: body.cols };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalid(problems: string[]): HttpError {
  return new HttpError(400, "invalid", problems.join(" "));
}
