// Starts BFF replicas as processes of their own (testing/replica-process.ts) against one cluster
// and one database, as a Deployment with several replicas runs them: for the multi-replica tests
// and the bench. A replica can be stopped gracefully or killed outright.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ReplicaMessage } from "./replica-process.ts";

const script = fileURLToPath(new URL("./replica-process.ts", import.meta.url));

export interface Replica {
  url: string;
  /** Its holderIdentity in the leases. */
  identity: string;
  pid: number;
  stats(): Promise<Extract<ReplicaMessage, { type: "stats" }>>;
  /** SIGKILL: no cleanup, its leases are left to run out. */
  kill(): Promise<void>;
  /** SIGTERM: shuts down cleanly and gives its leases up. */
  stop(): Promise<void>;
}

/** Starts a replica with this environment (on top of PATH and HOME); resolves once it listens. */
export function startReplica(
  env: Record<string, string>,
  options: { startTimeoutMs?: number } = {},
): Promise<Replica> {
  const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", script], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString("utf8"));
    if (output.length > 200) output.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the replica did not start in time; its output:\n${output.join("")}`));
    }, options.startTimeoutMs ?? 30_000);
    const exitedEarly = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`the replica exited (${code}) before it listened; its output:\n${output.join("")}`));
    };
    child.once("exit", exitedEarly);
    child.on("message", (message: ReplicaMessage) => {
      if (message.type !== "ready") return;
      clearTimeout(timer);
      child.off("exit", exitedEarly);
      resolve(replicaOf(child, message, exited));
    });
  });
}

function replicaOf(
  child: ChildProcess,
  ready: Extract<ReplicaMessage, { type: "ready" }>,
  exited: Promise<void>,
): Replica {
  return {
    url: ready.url,
    identity: ready.identity,
    pid: child.pid ?? 0,
    stats() {
      return new Promise((resolve, reject) => {
        const onMessage = (message: ReplicaMessage) => {
          if (message.type !== "stats") return;
          child.off("message", onMessage);
          resolve(message);
        };
        child.on("message", onMessage);
        if (!child.send({ type: "stats" })) reject(new Error("the replica is gone"));
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
