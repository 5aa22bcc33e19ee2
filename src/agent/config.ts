// The agent's settings: command-line flags win over LAB_AGENT_* variables, which win over the JSON
// config file (cloud-init writes it at launch), which wins over the defaults.
import { readFileSync } from "node:fs";
import { agentDefaultPort } from "../common/agent-protocol.ts";

export interface AgentConfig {
  host: string;
  port: number;
  tokenFile: string;
  /** Whom checks run as when the agent runs as root; null means the default account, "student". */
  user: string | null;
  /** Where checks run; null means the user's home directory. */
  home: string | null;
  /** The serial terminal whose size POST /v1/tty sets. */
  tty: string;
}

export const defaultConfigFile = "/etc/lab-agent/config.json";

type SettingKey = keyof AgentConfig;

const settings: { key: SettingKey; flag: string; env: string; help: string }[] = [
  { key: "host", flag: "--host", env: "LAB_AGENT_HOST", help: "address to listen on (default 0.0.0.0)" },
  {
    key: "port",
    flag: "--port",
    env: "LAB_AGENT_PORT",
    help: `TCP port, 0 = any (default ${agentDefaultPort})`,
  },
  {
    key: "tokenFile",
    flag: "--token-file",
    env: "LAB_AGENT_TOKEN_FILE",
    help: "file holding the bearer token (default /etc/lab-agent/token)",
  },
  {
    key: "user",
    flag: "--user",
    env: "LAB_AGENT_USER",
    help: "account checks run as, when root (default student)",
  },
  {
    key: "home",
    flag: "--home",
    env: "LAB_AGENT_HOME",
    help: "directory checks run in (default: the user's home)",
  },
  {
    key: "tty",
    flag: "--tty",
    env: "LAB_AGENT_TTY",
    help: "serial terminal for /v1/tty (default /dev/ttyS0)",
  },
];

export const usage = [
  "Usage: lab-agent [--config FILE] [options]",
  "",
  "Options (each also settable as a LAB_AGENT_* variable or a key of the JSON config file):",
  `  --config FILE        JSON config file, env LAB_AGENT_CONFIG (default ${defaultConfigFile}, if present)`,
  ...settings.map((s) => `  ${`${s.flag} VALUE`.padEnd(20)} ${s.help}, env ${s.env}`),
  "  --help               show this text",
].join("\n");

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid lab-agent configuration:\n  ${problems.join("\n  ")}`);
  }
}

/** Every problem is collected and reported at once. */
export function loadAgentConfig(argv: readonly string[], env: NodeJS.ProcessEnv): AgentConfig {
  const problems: string[] = [];
  const flags = parseFlags(argv, problems);
  const configFile = flags.get("--config") ?? env.LAB_AGENT_CONFIG;
  const fromFile = readConfigFile(configFile ?? defaultConfigFile, configFile !== undefined, problems);

  const raw = new Map<SettingKey, string>();
  for (const setting of settings) {
    const value = flags.get(setting.flag) ?? env[setting.env] ?? fromFile.get(setting.key);
    if (value !== undefined) raw.set(setting.key, value);
  }

  const port = raw.has("port") ? parsePort(raw.get("port") ?? "", problems) : agentDefaultPort;
  for (const [key, value] of raw) {
    if (value.trim() === "") problems.push(`${key} must not be empty.`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    host: raw.get("host") ?? "0.0.0.0",
    port,
    tokenFile: raw.get("tokenFile") ?? "/etc/lab-agent/token",
    user: raw.get("user") ?? null,
    home: raw.get("home") ?? null,
    tty: raw.get("tty") ?? "/dev/ttyS0",
  };
}

function parseFlags(argv: readonly string[], problems: string[]): Map<string, string> {
  const known = new Set(["--config", ...settings.map((s) => s.flag)]);
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const [name = "", inlineValue] = arg.split(/=(.*)/s, 2);
    if (!known.has(name)) {
      problems.push(`Unknown argument "${arg}" (see --help).`);
      continue;
    }
    const value = inlineValue ?? argv[++i];
    if (value === undefined) problems.push(`${name} needs a value.`);
    else flags.set(name, value);
  }
  return flags;
}

function readConfigFile(path: string, required: boolean, problems: string[]): Map<string, string> {
  const values = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (required || (error as NodeJS.ErrnoException).code !== "ENOENT") {
      problems.push(`Cannot read config file ${path}: ${(error as Error).message}`);
    }
    return values;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    problems.push(`Config file ${path} is not valid JSON: ${(error as Error).message}`);
    return values;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    problems.push(`Config file ${path} must hold a JSON object.`);
    return values;
  }
  const keys = new Set<string>(settings.map((s) => s.key));
  for (const [key, value] of Object.entries(parsed)) {
    if (!keys.has(key)) problems.push(`Config file ${path}: unknown key "${key}".`);
    else if (typeof value !== "string" && typeof value !== "number") {
      problems.push(`Config file ${path}: "${key}" must be a string or a number.`);
    } else values.set(key, String(value));
  }
  return values;
}

function parsePort(value: string, problems: string[]): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    problems.push(`port must be a whole number from 0 to 65535, not "${value}".`);
  }
  return port;
}
