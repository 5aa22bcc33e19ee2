// The shipped agent (src/agent/lab_agent/) as a process under test, and a client that signs its
// requests and checks the agent's signature, as the BFF does.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { signAgentRequest, verifyAgentAnswer, agentMacHeader } from "../../server/agent/signature.ts";

/** The agent's folder, which python3 runs as the guest runs its zip (docs/agent.md, "Delivery"). */
export const agentScript = fileURLToPath(new URL("../lab_agent/", import.meta.url)).replace(/\/$/, "");

/**
 * A copy of the agent at `folder`, each module's source passed through `edit` (e.g. to make an
 * older version of it), for `script` below.
 */
export function copyAgent(folder: string, edit: (module: string, source: string) => string): string {
  mkdirSync(folder);
  for (const module of readdirSync(agentScript).filter((name) => name.endsWith(".py"))) {
    writeFileSync(join(folder, module), edit(module, readFileSync(join(agentScript, module), "utf8")));
  }
  return folder;
}

export interface AgentSettings {
  keyFile: string;
  user?: string | null;
  home?: string;
  tty?: string;
  host?: string;
  port?: number;
  /** Another agent program than the shipped one, e.g. an older version. */
  script?: string;
}

export interface AgentProcess {
  port: number;
  pid: number;
  child: ChildProcess;
  /** Everything it printed so far. */
  output(): { stdout: string; stderr: string };
  /** SIGKILL, then waits for the exit. */
  stop(): Promise<void>;
}

export function agentArgs(settings: AgentSettings): string[] {
  const args = [
    "--host",
    settings.host ?? "127.0.0.1",
    "--port",
    String(settings.port ?? 0),
    "--key-file",
    settings.keyFile,
  ];
  if (settings.user) args.push("--user", settings.user);
  if (settings.home) args.push("--home", settings.home);
  args.push("--tty", settings.tty ?? "/dev/null-tty");
  return args;
}

/** Spawns the agent as a guest would (python3 -I -S: isolated, no site-packages) and waits for its "listening" line. */
export function runAgent(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  script: string = agentScript,
): ChildProcess {
  return spawn("python3", ["-I", "-S", script, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH, ...env },
  });
}

export async function startAgent(
  settings: AgentSettings,
  env: NodeJS.ProcessEnv = {},
): Promise<AgentProcess> {
  const child = runAgent(agentArgs(settings), env, settings.script);
  const output = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const onData = () => {
      const match = / listening on .*:(\d+)\n/.exec(output.stdout);
      if (match) {
        child.stdout?.off("data", onData);
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`the agent exited with ${code}: ${output.stderr}`)));
  });
  return {
    port,
    pid: child.pid ?? 0,
    child,
    output: () => ({ ...output }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

export interface SignedAnswer {
  status: number;
  body: Buffer;
  headers: Headers;
  /** The answer carries a MAC that verifies under the key the request was signed with. */
  verified: boolean;
  json(): unknown;
}

/** One request signed with `key`; `authorization` replaces the signature (null sends none). */
export async function callAgent(
  port: number,
  key: string,
  path: string,
  init: { method?: string; body?: unknown; authorization?: string | null; signal?: AbortSignal } = {},
): Promise<SignedAnswer> {
  const method = init.method ?? (init.body === undefined ? "GET" : "POST");
  const body =
    init.body === undefined
      ? Buffer.alloc(0)
      : Buffer.from(typeof init.body === "string" ? init.body : JSON.stringify(init.body));
  const signed = signAgentRequest(key, method, path, body);
  const authorization = init.authorization === undefined ? signed.authorization : init.authorization;
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: authorization === null ? {} : { authorization },
    body: method === "GET" ? undefined : body,
    signal: init.signal,
  });
  const answer = Buffer.from(await response.arrayBuffer());
  const mac = response.headers.get(agentMacHeader) ?? undefined;
  return {
    status: response.status,
    body: answer,
    headers: response.headers,
    verified: verifyAgentAnswer(key, signed.nonce, response.status, answer, mac),
    json: () => JSON.parse(answer.toString("utf8")) as unknown,
  };
}
