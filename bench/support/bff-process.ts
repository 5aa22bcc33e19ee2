// The BFF in a process of its own, so that its CPU and memory are measured apart from the bench's
// clients. The script (console-bff.ts, soak-bff.ts) starts it as `npm start` does, sends
// { type: "ready", url } and then answers the bench's commands over IPC; "stop" ends it.
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { projectRoot } from "./bench-cluster.ts";

export interface BffProcess<Message extends { type: string }> {
  url: string;
  pid: number;
  /** Sends a command; the answer is the next message of the given type. */
  ask<Type extends Message["type"]>(command: string, answer: Type): Promise<Extract<Message, { type: Type }>>;
  send(command: string): void;
  stop(): Promise<void>;
}

export async function forkBff<Message extends { type: string }>(
  script: string,
  options: { kubeconfigPath: string; env?: Record<string, string>; execArgv?: string[] },
): Promise<BffProcess<Message>> {
  const child: ChildProcess = fork(path.join(projectRoot, "bench", script), [], {
    execArgv: ["--import", "tsx", ...(options.execArgv ?? [])],
    cwd: projectRoot,
    env: {
      ...process.env,
      LAB_KUBECONFIG: options.kubeconfigPath,
      AUTH_MODE: "demo",
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "warn",
      ...options.env,
    },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const { url } = await nextMessage<{ type: "ready"; url: string }>(child, "ready");
  return {
    url,
    pid: child.pid ?? 0,
    ask<Type extends Message["type"]>(command: string, answer: Type) {
      const answered = nextMessage<Extract<Message, { type: Type }>>(child, answer);
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
}

/** The child's next message of this type; rejects if the child exits first. */
function nextMessage<Message extends { type: string }>(
  child: ChildProcess,
  type: Message["type"],
): Promise<Message> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the BFF exited (${code})`));
    const onMessage = (message: Message) => {
      if (message.type !== type) return;
      child.off("message", onMessage).off("exit", onExit);
      resolve(message);
    };
    child.on("message", onMessage).once("exit", onExit);
  });
}
