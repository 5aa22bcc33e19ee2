// A bench script in a process of its own, run by tsx as `npm start` runs the BFF, so that its CPU and
// memory are measured apart from the bench's clients. The script sends { type: "ready", ... } once it
// is up, then answers the bench's commands over IPC; "stop" ends it. forkBff starts a server the
// bench's clients connect to, against the bench's emulator: a BFF (console-bff.ts, soak-bff.ts) or the
// bare pipe that is its floor (bare-pipe.ts). forkBenchProcess starts any other script
// (console-observers.ts).
//
// BENCH_CPU_PROFILE_DIR=<folder> has every forked script write a V8 CPU profile there as it stops
// (`--cpu-prof`): where the relay's CPU goes, run by run.
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { projectRoot } from "./bench-cluster.ts";

export interface BenchProcess<Message extends { type: string }> {
  pid: number;
  /** Sends a command; the answer is the next message of the given type. */
  ask<Type extends Message["type"]>(command: string, answer: Type): Promise<Extract<Message, { type: Type }>>;
  send(command: string): void;
  stop(): Promise<void>;
}

export interface BffProcess<Message extends { type: string }> extends BenchProcess<Message> {
  url: string;
}

interface ForkOptions {
  env?: Record<string, string>;
  execArgv?: string[];
}

export async function forkBff<Message extends { type: string }>(
  script: string,
  options: ForkOptions & { kubeconfigPath: string },
): Promise<BffProcess<Message>> {
  const { started, ready } = await forkScript<Message, { type: "ready"; url: string }>(script, {
    execArgv: options.execArgv,
    env: {
      LAB_KUBECONFIG: options.kubeconfigPath,
      AUTH_MODE: "demo",
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "warn",
      ...options.env,
    },
  });
  return { ...started, url: ready.url };
}

export async function forkBenchProcess<Message extends { type: string }>(
  script: string,
  options: ForkOptions = {},
): Promise<BenchProcess<Message>> {
  return (await forkScript<Message, { type: "ready" }>(script, options)).started;
}

async function forkScript<Message extends { type: string }, Ready extends { type: "ready" }>(
  script: string,
  options: ForkOptions,
): Promise<{ started: BenchProcess<Message>; ready: Ready }> {
  const child: ChildProcess = fork(path.join(projectRoot, "bench", script), [], {
    execArgv: ["--import", "tsx", ...profiling(), ...(options.execArgv ?? [])],
    cwd: projectRoot,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const ready = await nextMessage<Ready>(child, script, "ready");
  const started: BenchProcess<Message> = {
    pid: child.pid ?? 0,
    ask<Type extends Message["type"]>(command: string, answer: Type) {
      const answered = nextMessage<Extract<Message, { type: Type }>>(child, script, answer);
      child.send(command);
      return answered;
    },
    send: (command) => child.send(command),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send("stop");
      await exited;
    },
  };
  return { started, ready };
}

/** The child's next message of this type; rejects if the child exits first. */
function nextMessage<Message extends { type: string }>(
  child: ChildProcess,
  script: string,
  type: Message["type"],
): Promise<Message> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`bench/${script} exited (${code})`));
    const onMessage = (message: Message) => {
      if (message.type !== type) return;
      child.off("message", onMessage).off("exit", onExit);
      resolve(message);
    };
    child.on("message", onMessage).once("exit", onExit);
  });
}

function profiling(): string[] {
  const folder = process.env.BENCH_CPU_PROFILE_DIR;
  return folder ? ["--cpu-prof", `--cpu-prof-dir=${folder}`, "--cpu-prof-interval=500"] : [];
}
