import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentDefaultPort } from "../common/agent-protocol.ts";
import { ConfigError, loadAgentConfig } from "./config.ts";

let dir: string;
const configFile = async (name: string, content: string) => {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
};
const problemsOf = (run: () => unknown): string[] => {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected a ConfigError");
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lab-agent-config-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("loadAgentConfig", () => {
  it("fills the defaults", async () => {
    const path = await configFile("empty.json", "{}");
    expect(loadAgentConfig(["--config", path], {})).toEqual({
      host: "0.0.0.0",
      port: agentDefaultPort,
      tokenFile: "/etc/lab-agent/token",
      user: null,
      home: null,
      tty: "/dev/ttyS0",
    });
  });

  it("takes flags over LAB_AGENT_* variables over the config file", async () => {
    const path = await configFile("all.json", JSON.stringify({ port: 7001, user: "file", tty: "/dev/file" }));
    const config = loadAgentConfig(["--port=7003", "--tty", "/dev/flag"], {
      LAB_AGENT_CONFIG: path,
      LAB_AGENT_PORT: "7002",
      LAB_AGENT_USER: "env",
    });
    expect(config).toMatchObject({ port: 7003, user: "env", tty: "/dev/flag" });
  });

  it("reports every problem at once", async () => {
    const path = await configFile("bad.json", JSON.stringify({ prot: 1, user: true }));
    const problems = problemsOf(() =>
      loadAgentConfig(["--config", path, "--port", "99999", "--verbose", "--home", "", "--tty"], {}),
    );
    expect(problems).toEqual([
      'Unknown argument "--verbose" (see --help).',
      "--tty needs a value.",
      `Config file ${path}: unknown key "prot".`,
      `Config file ${path}: "user" must be a string or a number.`,
      'port must be a whole number from 0 to 65535, not "99999".',
      "home must not be empty.",
    ]);
  });

  it("requires a config file that was named explicitly, and valid JSON in it", async () => {
    const missing = join(dir, "missing.json");
    expect(problemsOf(() => loadAgentConfig(["--config", missing], {}))[0]).toMatch(
      /^Cannot read config file .*missing\.json: ENOENT/,
    );
    const broken = await configFile("broken.json", "{port: 1}");
    expect(problemsOf(() => loadAgentConfig([], { LAB_AGENT_CONFIG: broken }))[0]).toMatch(
      /is not valid JSON/,
    );
  });
});
