// A Lab Console of its own for e2e/lti.spec.ts, beside a test LMS that knows it: the spec stops and
// starts it again on the same data directory (a restart mid-post), which the shared webServer's console
// cannot do. Started as `npm start` would (the built dist/server/main.js), in its own process group.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { configuredPlatform, startCoursePlatform } from "../../src/server/lti/testing/lti-setup.ts";
import type { TestPlatform } from "../../src/server/lti/testing/test-platform.ts";
import { freePort } from "../../src/server/testing/free-port.ts";

/** The console's last lines of output, kept to explain a start that failed. */
const keptLines = 200;

export class LtiConsole {
  private child: ChildProcess | undefined;
  private output: string[] = [];

  private constructor(
    readonly url: string,
    readonly platform: TestPlatform,
    private readonly env: NodeJS.ProcessEnv,
    private readonly dir: string,
  ) {}

  /** A test LMS with course cs101 linking `labId`, and a console configured for it (not started yet). */
  static async create(labId: string): Promise<LtiConsole> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const platform = await startCoursePlatform(url, labId);
    const dir = mkdtempSync(join(tmpdir(), "lab-console-e2e-lti-"));
    const platformsFile = join(dir, "lti-platforms.yaml");
    const configured = configuredPlatform(platform);
    writeFileSync(
      platformsFile,
      stringify({
        platforms: [
          {
            id: configured.id,
            name: configured.name,
            issuer: configured.issuer,
            clientId: configured.clientId,
            authLoginUrl: configured.authLoginUrl.href,
            tokenUrl: configured.tokenUrl.href,
            jwksUrl: configured.jwksUrl.href,
            deploymentIds: configured.deploymentIds,
            emailDomains: configured.emailDomains,
          },
        ],
      }),
    );
    const env = {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_URL: url,
      DATA_DIR: join(dir, "data"),
      LAB_EMULATOR_TIMING: "fast",
      LTI_PLATFORMS_FILE: platformsFile,
    };
    return new LtiConsole(url, platform, env, dir);
  }

  /** Starts the console and waits until it is ready (its embedded emulator too). */
  async start(): Promise<void> {
    if (this.child) throw new Error("the LTI console is running already");
    this.output = [];
    const child = spawn(process.execPath, ["dist/server/main.js"], {
      env: this.env,
      // Its own process group: the emulator it spawns goes with it if it must be killed.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding("utf8");
      stream?.on("data", (text: string) => {
        this.output.push(...text.split("\n").filter((line) => line !== ""));
        this.output.splice(0, Math.max(0, this.output.length - keptLines));
      });
    }
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code, signal) =>
        reject(new Error(`the LTI console exited (${signal ?? code}) while starting:\n${this.log()}`)),
      ),
    );
    exited.catch(() => {});
    await Promise.race([exited, this.ready()]);
  }

  /** SIGTERM, as an orchestrator stops it (it stops its emulator then), and waits until it has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const stopped = await Promise.race([
      exited.then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 15_000).unref()),
    ]);
    if (!stopped && child.pid !== undefined) {
      // Only this console's own group (it was started detached): never anything else.
      process.kill(-child.pid, "SIGKILL");
      await exited;
      throw new Error(`the LTI console did not stop within 15 s of SIGTERM:\n${this.log()}`);
    }
  }

  /** Stops the console and the LMS and removes the data directory. */
  async dispose(): Promise<void> {
    try {
      await this.stop();
    } finally {
      await this.platform.close();
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  log(): string {
    return this.output.join("\n");
  }

  private async ready(): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      try {
        if ((await fetch(`${this.url}/api/readyz`)).ok) return;
      } catch {
        // Not listening yet.
      }
      // Polling a port that is not open yet: there is no event to await.
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`the LTI console was not ready within 60 s:\n${this.log()}`);
  }
}
