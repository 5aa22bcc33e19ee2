// A running real-apiserver (etcd and kube-apiserver in one Go process): started, waited for until
// /readyz answers 200, and stopped with nothing left behind (the process and its data folder).
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { KubeConfig } from "@kubernetes/client-node";
import { residentMiB } from "../common/resident-memory.ts";
import { eventually } from "../common/testing/patience.ts";
import { apiRequest } from "./api-requests.ts";
import { SetupError } from "./setup-error.ts";

export interface ControlPlaneOptions {
  /** The real-apiserver binary (go-binary.ts). */
  binary: string;
  /** Where the server writes the admin's kubeconfig (a client certificate in system:masters). */
  kubeconfig: string;
  /** On 127.0.0.1; 0 for any free port. */
  port: number;
  /** The server's own log (its stderr). */
  logFile: string;
  /** Also copies the log here (the terminal, with --verbose). */
  echoLog?: NodeJS.WritableStream;
  /** Aborting stops the server, whether it is still starting or long ready. */
  signal?: AbortSignal;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ControlPlane {
  /** e.g. https://127.0.0.1:6443 */
  server: string;
  /** The admin's. */
  kubeConfig: KubeConfig;
  /**
   * kube-apiserver's front-proxy client certificate and key (PEM files under the data folder's pki/,
   * cluster/real-apiserver/pki.go), for tests that call an aggregated server as kube-apiserver does.
   */
  frontProxyClient: { certFile: string; keyFile: string };
  /** What /version reports, e.g. v1.34.3. */
  version: string;
  /** When the server gets to /readyz 200, in ms since the start. */
  readyAfterMs: number;
  /** Resolves once the server has stopped, by stop() or on its own. */
  exited: Promise<Exit>;
  /** The server's resident memory in MiB, where /proc tells it (Linux). */
  residentMiB(): number | undefined;
  /** Stops the server and removes its data folder. Safe to call more than once. */
  stop(): Promise<void>;
}

/** The Go program's exit code for a port in use. */
const exitPortInUse = 3;

/**
 * Fails early, before a build of minutes, if the port is taken. The server checks it again (exit
 * code 3), since something may take it meanwhile.
 */
export async function assertPortFree(port: number): Promise<void> {
  const server = net.createServer();
  try {
    server.listen(port, "127.0.0.1");
    await once(server, "listening");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") throw portInUse(port);
    throw new SetupError(`Cannot listen on 127.0.0.1:${port}: ${String(error)}`);
  } finally {
    server.close();
  }
}

function portInUse(port: number): SetupError {
  return new SetupError(
    `Port ${port} on 127.0.0.1 is in use (another API server, or the emulator?). Stop it or pass --port.`,
  );
}

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const startedAt = Date.now();
  // The launcher owns the data folder (etcd, certificates) and removes it once the server has exited.
  // WARNING: the server's own removal is not enough: stopped before its post-start hooks finish,
  // kube-apiserver exits through klog.Fatal (code 255, "PostStartHook ... failed"), past it.
  const dataDir = await mkdtemp(path.join(tmpdir(), "lab-real-apiserver-"));
  const child = spawn(
    options.binary,
    [
      "--kubeconfig",
      options.kubeconfig,
      "--port",
      String(options.port),
      "--data-dir",
      dataDir,
      "--exit-with-stdin",
    ],
    // Its own process group: Ctrl-C reaches only the launcher, which stops the server once, gracefully.
    // The stdin pipe is its lifeline: if the launcher dies, the pipe closes and the server stops.
    { stdio: ["pipe", "pipe", "pipe"], detached: true },
  );
  const log = createWriteStream(options.logFile);
  child.stderr.pipe(log);
  if (options.echoLog) child.stderr.pipe(options.echoLog);
  const exited = (once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>).then(
    async ([code, signal]) => {
      await rm(dataDir, { recursive: true, force: true });
      return { code, signal };
    },
  );
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= stopChild(child, exited));
  const onAbort = () => void stop();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  void exited.then(() => options.signal?.removeEventListener("abort", onAbort));
  if (options.signal?.aborted) onAbort();

  try {
    const server = await serverUrl(child, exited, options);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(options.kubeconfig);
    await untilReady(kubeConfig, child);
    const readyAfterMs = Date.now() - startedAt;
    const version = JSON.parse((await apiRequest(kubeConfig, "GET", "/version")).text) as {
      gitVersion?: string;
    };
    return {
      server,
      kubeConfig,
      frontProxyClient: {
        certFile: path.join(dataDir, "pki", "front-proxy-client.crt"),
        keyFile: path.join(dataDir, "pki", "front-proxy-client.key"),
      },
      version: version.gitVersion ?? "?",
      readyAfterMs,
      exited,
      residentMiB: () => (child.pid === undefined ? undefined : residentMiB(child.pid)),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The server's URL from its "serving" line on stdout; rejects if it exits first. */
function serverUrl(
  child: ChildProcess,
  exited: Promise<Exit>,
  options: ControlPlaneOptions,
): Promise<string> {
  return new Promise((resolve, reject) => {
    if (child.stdout === null) throw new Error("real-apiserver was started without a stdout pipe");
    createInterface({ input: child.stdout }).on("line", (line) => {
      try {
        const event = JSON.parse(line) as { event?: string; server?: string };
        if (event.event === "serving" && event.server !== undefined) resolve(event.server);
      } catch {
        // Not an event line: nothing else writes to stdout, but ignore it rather than stop.
      }
    });
    void exited.then(({ code }) =>
      reject(
        code === exitPortInUse
          ? portInUse(options.port)
          : new SetupError(
              `real-apiserver exited (code ${code}) before serving. ${logTail(options.logFile)}`,
            ),
      ),
    );
  });
}

/** Until /readyz answers 200 (etcd, the informers, the bootstrap RBAC); gives up if the server exits. */
async function untilReady(kubeConfig: KubeConfig, child: ChildProcess): Promise<void> {
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  await eventually(
    () =>
      gone()
        ? Promise.resolve("exited")
        : apiRequest(kubeConfig, "GET", "/readyz").then(
            ({ status }) => status,
            (error: Error) => error.message,
          ),
    (answer) => answer === 200 || answer === "exited",
    { timeoutMs: 120_000, what: "the API server's /readyz" },
  );
  if (gone()) throw new SetupError("real-apiserver stopped before it was ready.");
}

/** The last lines of the server's log, for a failure message (the log is small until it serves). */
function logTail(logFile: string): string {
  try {
    const lines = readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-15);
    return `Its log's last lines (all in ${logFile}):\n${lines.join("\n")}`;
  } catch {
    return `See ${logFile}.`;
  }
}

/**
 * SIGTERM, so the server stops etcd and kube-apiserver; SIGKILL only if that hangs. Resolves once
 * `exited` has, its data folder removed, even when the server had already stopped on its own.
 */
async function stopChild(child: ChildProcess, exited: Promise<Exit>): Promise<void> {
  const running = child.exitCode === null && child.signalCode === null;
  if (running) child.kill("SIGTERM");
  const timer = running ? setTimeout(() => child.kill("SIGKILL"), 45_000) : undefined;
  await exited;
  clearTimeout(timer);
}
