// Runs the BFF as a child process (testing/bff-main.ts through tsx) and keeps everything it prints,
// for tests that kill it with SIGKILL, give it a data folder on a full disk, or read its logs.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { projectRoot } from "../../project-root.ts";

export interface BffProcess {
  url: string;
  pid: number;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Sends the signal and waits for the process to exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

export interface BffProcessOptions {
  env: Record<string, string>;
  /**
   * Runs it in a mount namespace of its own with a tmpfs of this size at DATA_DIR: a disk that can
   * fill up without filling the machine's. The test reaches the folder through /proc/<pid>/root.
   */
  dataDirTmpfsBytes?: number;
}

const entry = path.join(import.meta.dirname, "bff-main.ts");

export async function startBffProcess(options: BffProcessOptions): Promise<BffProcess> {
  const node = [process.execPath, "--import", "tsx", entry];
  const command =
    options.dataDirTmpfsBytes === undefined
      ? node
      : [
          "unshare",
          "--mount",
          "sh",
          "-c",
          `mount -t tmpfs -o size=${options.dataDirTmpfsBytes} proof-data "$DATA_DIR" && exec "$@"`,
          "sh",
          ...node,
        ];
  const child: ChildProcess = spawn(command[0]!, command.slice(1), {
    cwd: projectRoot,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      resolve();
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        output += `${line}\n`;
        const ready = /^proof-bff-ready (\S+)$/.exec(line);
        if (ready) resolve(ready[1]!);
      });
    }
    void exit.then(() => reject(new Error(`the BFF exited before it was ready:\n${output}`)));
  });
  return {
    url,
    pid: child.pid!,
    output: () => output,
    async kill(signal) {
      if (!exited) child.kill(signal);
      await exit;
    },
  };
}
