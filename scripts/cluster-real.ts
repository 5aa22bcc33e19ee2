// `npm run cluster:real -- --kubeconfig ADMIN [--bff-kubeconfig BFF] [--port 6443] [--verbose]`:
// a real kube-apiserver and etcd (cluster/real-apiserver, Go) for testing against instead of the
// emulator (docs/real-apiserver.md). Builds the Go program when its sources changed (the binary is
// cached under .lab/real-apiserver/, named by a hash of its sources, go.sum and the Go toolchain),
// starts it, waits for /readyz, installs KubeVirt's CRDs (src/emulator/apiserver/openapi/crds.ts)
// and, with --bff-kubeconfig, deploy/base's namespaces, service account and RBAC with a kubeconfig
// holding that service account's token. Ctrl-C stops it and it removes its data.
//
// Test infrastructure: nothing in `npm test` or CI runs this yet (issue 38).
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import https from "node:https";
import net from "node:net";
import { setPriority } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseArgs, promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { parseAllDocuments, stringify } from "yaml";
import { kubevirtCustomResourceDefinitions } from "../src/emulator/apiserver/openapi/crds.ts";

const root = path.resolve(import.meta.dirname, "..");
const goModule = path.join(root, "cluster", "real-apiserver");
const cacheDir = path.join(root, ".lab", "real-apiserver");

const startedAt = Date.now();
const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** A failure with a message for people: printed as it is, without a stack. */
class SetupError extends Error {}

function usage(): never {
  throw new SetupError(
    "usage: npm run cluster:real -- --kubeconfig ADMIN [--bff-kubeconfig BFF] [--port 6443] [--verbose]",
  );
}

function parseOptions() {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      "bff-kubeconfig": { type: "string" },
      port: { type: "string", default: "6443" },
      verbose: { type: "boolean", default: false },
    },
  });
  const port = Number(values.port);
  if (values.kubeconfig === undefined || !Number.isInteger(port) || port < 1 || port > 65535) usage();
  return {
    kubeconfig: path.resolve(values.kubeconfig),
    bffKubeconfig:
      values["bff-kubeconfig"] === undefined ? undefined : path.resolve(values["bff-kubeconfig"]),
    port,
    verbose: values.verbose,
  };
}

async function assertPortFree(port: number): Promise<void> {
  const server = net.createServer();
  try {
    server.listen(port, "127.0.0.1");
    await once(server, "listening");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") {
      throw new SetupError(
        `Port ${port} on 127.0.0.1 is in use (another API server, or the emulator?). Stop it or pass --port.`,
      );
    }
    throw new SetupError(`Cannot listen on 127.0.0.1:${port}: ${String(error)}`);
  } finally {
    server.close();
  }
}

// ---- the Go toolchain and the build ----

interface GoModule {
  /** The Go version go.mod asks for, e.g. 1.24.0. */
  go: string;
  /** The k8s.io/kubernetes version, e.g. v1.34.3: what the server reports as its version. */
  kubernetes: string;
  etcd: string;
}

async function readGoModule(): Promise<GoModule> {
  const text = await readFile(path.join(goModule, "go.mod"), "utf8");
  const find = (pattern: RegExp, what: string): string => {
    const match = pattern.exec(text);
    if (match?.[1] === undefined) throw new Error(`cluster/real-apiserver/go.mod names no ${what}`);
    return match[1];
  };
  return {
    go: find(/^go (\S+)$/m, "go version"),
    kubernetes: find(/^\s+k8s\.io\/kubernetes (v\S+)$/m, "k8s.io/kubernetes"),
    etcd: find(/^\s+go\.etcd\.io\/etcd\/server\/v3 (v\S+)$/m, "go.etcd.io/etcd/server/v3"),
  };
}

function versionAtLeast(have: string, want: string): boolean {
  const parts = (v: string) => v.split(".").map((n) => Number.parseInt(n, 10) || 0);
  const [a, b] = [parts(have), parts(want)];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const [x = 0, y = 0] = [a[i], b[i]];
    if (x !== y) return x > y;
  }
  return true;
}

/** `go version`'s line, e.g. "go version go1.26.8 linux/amd64"; a clear error without Go. */
async function goVersion(mod: GoModule): Promise<string> {
  let output: string;
  try {
    ({ stdout: output } = await promisify(execFile)("go", ["version"], { cwd: goModule }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new SetupError(
        `Go is missing: no "go" on PATH. The real API server is built from Go modules (kube-apiserver ` +
          `${mod.kubernetes}, etcd ${mod.etcd}); install Go ${mod.go} or newer (https://go.dev/dl/) and ` +
          `make sure the module proxy (GOPROXY, default proxy.golang.org) is reachable.`,
      );
    }
    throw new SetupError(`"go version" failed: ${String(error)}`);
  }
  const found = /go(\d+\.\d+(?:\.\d+)?)/.exec(output)?.[1];
  if (found !== undefined && !versionAtLeast(found, mod.go)) {
    throw new SetupError(`Go ${found} is too old: cluster/real-apiserver needs Go ${mod.go} or newer.`);
  }
  return output.trim();
}

/** What the binary is built from: the sources, go.mod and go.sum, the toolchain and the link flags. */
async function sourceHash(goVersionLine: string, ldflags: string): Promise<string> {
  const hash = createHash("sha256");
  hash.update(`${goVersionLine}\n${ldflags}\n`);
  const names = (await readdir(goModule))
    .filter((name) => name.endsWith(".go") || name === "go.mod" || name === "go.sum")
    .sort();
  for (const name of names) {
    hash.update(`${name}\0`);
    hash.update(await readFile(path.join(goModule, name)));
    hash.update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

function linkFlags(mod: GoModule): string {
  // Without these the server reports v0.0.0-master; the emulation version comes from the module itself.
  const [major = "", minor = ""] = mod.kubernetes.replace(/^v/, "").split(".");
  const version = "k8s.io/component-base/version";
  return [
    "-s -w",
    `-X ${version}.gitVersion=${mod.kubernetes}`,
    `-X ${version}.gitMajor=${major}`,
    `-X ${version}.gitMinor=${minor}`,
    `-X ${version}.gitTreeState=clean`,
  ].join(" ");
}

/** The path of a binary built from the current sources: the cached one, or a fresh build. */
async function binary(mod: GoModule): Promise<string> {
  const goLine = await goVersion(mod);
  const ldflags = linkFlags(mod);
  const key = await sourceHash(goLine, ldflags);
  const target = path.join(cacheDir, "bin", `real-apiserver-${key}`);
  if (existsSync(target)) {
    console.log(`real-apiserver: cached build ${path.relative(root, target)}`);
    return target;
  }
  await mkdir(path.dirname(target), { recursive: true });
  const logFile = path.join(cacheDir, "build.log");
  console.log(
    `real-apiserver: building kube-apiserver ${mod.kubernetes} and etcd ${mod.etcd} with ${goLine.replace(/^go version /, "")}` +
      ` (the first build downloads the modules and compiles for several minutes; later ones are cached)...`,
  );
  const buildStart = Date.now();
  const partial = `${target}.partial`;
  const log = createWriteStream(logFile);
  const build = spawn("go", ["build", "-trimpath", "-ldflags", ldflags, "-o", partial, "."], {
    cwd: goModule,
    env: { ...process.env, CGO_ENABLED: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The machine is shared (QEMU guests, other tests): the compile takes what is left over. The
  // compiler processes go starts later inherit this.
  if (build.pid !== undefined) {
    try {
      setPriority(build.pid, 19);
    } catch {
      // Not allowed to lower it (unusual): the build still works, only less politely.
    }
  }
  build.stdout.pipe(log, { end: false });
  build.stderr.pipe(log, { end: false });
  const [code] = (await once(build, "close")) as [number | null];
  log.end();
  if (code !== 0) {
    const output = (await readFile(logFile, "utf8")).trimEnd().split("\n").slice(-30).join("\n");
    throw new SetupError(
      `The Go build of cluster/real-apiserver failed (exit ${code}; k8s.io/kubernetes ${mod.kubernetes}, ` +
        `etcd ${mod.etcd}, ${goLine}). Its last lines (all in ${path.relative(root, logFile)}):\n${output}`,
    );
  }
  await rename(partial, target);
  console.log(`real-apiserver: built in ${seconds(buildStart)}`);
  // Older builds are ~100 MB each: keep only this one.
  for (const name of await readdir(path.dirname(target))) {
    if (name !== path.basename(target)) await rm(path.join(path.dirname(target), name), { force: true });
  }
  return target;
}

// ---- running it ----

interface Serving {
  server: string;
}

const exitPortInUse = 3;

function start(bin: string, options: ReturnType<typeof parseOptions>, logFile: string) {
  const child = spawn(
    bin,
    ["--kubeconfig", options.kubeconfig, "--port", String(options.port), "--exit-with-stdin"],
    // Its own process group: Ctrl-C reaches only this script, which stops the server once, gracefully.
    // The stdin pipe is its lifeline: if this script dies, the pipe closes and the server stops.
    { stdio: ["pipe", "pipe", "pipe"], detached: true },
  );
  const log = createWriteStream(logFile);
  child.stderr.pipe(log);
  if (options.verbose) child.stderr.pipe(process.stderr);
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const serving = new Promise<Serving>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      try {
        const event = JSON.parse(line) as { event?: string; server?: string };
        if (event.event === "serving" && event.server !== undefined) resolve({ server: event.server });
      } catch {
        // Not an event line: nothing else writes to stdout, but ignore it rather than stop.
      }
    });
    void exited.then(([code]) => {
      reject(
        code === exitPortInUse
          ? new SetupError(`Port ${options.port} on 127.0.0.1 is in use. Stop what holds it or pass --port.`)
          : new SetupError(`real-apiserver exited (code ${code}) before serving. ${logTail(logFile)}`),
      );
    });
  });
  return { child, exited, serving };
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
 * One request to the API server with the admin kubeconfig's credentials. Plain JSON on purpose:
 * client-node's typed models serialize a CRD's schema through their own field names and silently drop
 * the x-kubernetes-* keys they do not list (x-kubernetes-int-or-string inside `properties`).
 */
async function call(
  kc: KubeConfig,
  method: "GET" | "POST",
  url: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const options: https.RequestOptions = { method, timeout: 10_000 };
  await kc.applyToHTTPSOptions(options);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  options.headers = {
    ...options.headers,
    accept: "application/json",
    ...(payload === undefined ? {} : { "content-type": "application/json" }),
  };
  return new Promise((resolve, reject) => {
    const request = https.request(url, options, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on("timeout", () => request.destroy(new Error("timed out")));
    request.on("error", reject);
    request.end(payload);
  });
}

/** A create that must succeed; a refusal is reported with the API server's own message. */
async function create(kc: KubeConfig, server: string, apiPath: string, object: unknown, what: string) {
  const { status, text } = await call(kc, "POST", `${server}${apiPath}`, object);
  if (status >= 200 && status < 300) return JSON.parse(text) as unknown;
  let message = text;
  try {
    message = (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    // Not a Status: keep the text.
  }
  throw new SetupError(`Creating ${what} was refused (HTTP ${status}): ${message}`);
}

async function waitUntil<T>(
  what: string,
  timeoutMs: number,
  attempt: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline)
      throw new SetupError(`Timed out waiting for ${what}${last ? ` (${last})` : ""}.`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

interface Condition {
  type?: string;
  status?: string;
}

async function installCrds(kc: KubeConfig, server: string): Promise<string[]> {
  const crdsPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  const crds = kubevirtCustomResourceDefinitions();
  for (const crd of crds) await create(kc, server, crdsPath, crd, `CRD ${crd.metadata.name}`);
  // Established: the API server serves the kind (discovery and REST).
  for (const crd of crds) {
    await waitUntil(`CRD ${crd.metadata.name} to be established`, 60_000, async () => {
      const { text } = await call(kc, "GET", `${server}${crdsPath}/${crd.metadata.name}`);
      const current = JSON.parse(text) as { status?: { conditions?: Condition[] } };
      const established = current.status?.conditions?.some(
        (c) => c.type === "Established" && c.status === "True",
      );
      return established ? true : undefined;
    });
  }
  return crds.map((crd) => crd.metadata.name);
}

// deploy/base's pieces that give the BFF its identity and rights; the Deployment and the rest are not
// for a cluster without nodes.
const bffManifests = [
  "namespaces.yaml",
  "serviceaccount.yaml",
  "rbac-sessions.yaml",
  "rbac-leases.yaml",
  "rbac-cluster.yaml",
];
const bffServiceAccount = { namespace: "lab-console", name: "lab-console" };

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

/** The collection a manifest is created in. Only the kinds deploy/base's RBAC files hold. */
function collectionPath(object: Manifest): string {
  const plural: Record<string, string> = {
    Namespace: "namespaces",
    ServiceAccount: "serviceaccounts",
    Role: "roles",
    RoleBinding: "rolebindings",
    ClusterRole: "clusterroles",
    ClusterRoleBinding: "clusterrolebindings",
  };
  const resource = plural[object.kind];
  if (resource === undefined) throw new Error(`cluster:real does not know the kind ${object.kind}`);
  const prefix = object.apiVersion.includes("/") ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
  const namespace = object.metadata.namespace === undefined ? "" : `/namespaces/${object.metadata.namespace}`;
  return `${prefix}${namespace}/${resource}`;
}

async function writeBffKubeconfig(kc: KubeConfig, server: string, target: string): Promise<void> {
  for (const file of bffManifests) {
    const text = await readFile(path.join(root, "deploy", "base", file), "utf8");
    for (const doc of parseAllDocuments(text)) {
      const object = doc.toJS() as Manifest | null;
      if (object === null) continue;
      await create(
        kc,
        server,
        collectionPath(object),
        object,
        `deploy/base/${file}'s ${object.kind} ${object.metadata.name}`,
      );
    }
  }
  // A token from the TokenRequest API, as the kubelet projects into a pod: bound to the service
  // account, expiring (a day, as long as the certificates; the server is gone long before).
  const { namespace, name } = bffServiceAccount;
  const answer = (await create(
    kc,
    server,
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 24 * 3600 } },
    `a token for ${namespace}/${name}`,
  )) as { status?: { token?: string } };
  const token = answer.status?.token;
  if (token === undefined) throw new SetupError("The TokenRequest answered without a token.");
  const user = `system:serviceaccount:${namespace}:${name}`;
  const text = stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      { name: "lab-real", cluster: { server, "certificate-authority-data": kc.getCurrentCluster()?.caData } },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: "lab-real-bff", context: { cluster: "lab-real", user, namespace: "lab-sessions" } }],
    "current-context": "lab-real-bff",
  });
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, text, { mode: 0o600 });
  await chmod(target, 0o600);
}

/** The server's resident memory, where /proc tells it (Linux). */
async function residentMegabytes(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}

async function stop(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);
  await exited;
  clearTimeout(timer);
}

async function main(): Promise<void> {
  const options = parseOptions();
  await assertPortFree(options.port);
  const mod = await readGoModule();
  const bin = await binary(mod);

  await mkdir(cacheDir, { recursive: true });
  const logFile = path.join(cacheDir, "apiserver.log");
  const launchedAt = Date.now();
  const { child, exited, serving } = start(bin, options, logFile);
  let stopping = false;
  const shutdown = (why: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\nreal-apiserver: ${why}: stopping...`);
    void stop(child, exited).then(() => {
      console.log("real-apiserver: stopped, its data removed");
      process.exit(0);
    });
  };
  process.on("SIGINT", () => shutdown("interrupted"));
  process.on("SIGTERM", () => shutdown("terminated"));

  try {
    const { server } = await serving;
    const kc = new KubeConfig();
    kc.loadFromFile(options.kubeconfig);
    await waitUntil("the API server's /readyz", 120_000, async () => {
      const { status } = await call(kc, "GET", `${server}/readyz`);
      return status === 200 ? true : undefined;
    });
    const readyAfter = seconds(launchedAt);
    const crds = await installCrds(kc, server);
    if (options.bffKubeconfig !== undefined) await writeBffKubeconfig(kc, server, options.bffKubeconfig);
    const version = JSON.parse((await call(kc, "GET", `${server}/version`)).text) as { gitVersion?: string };
    const rss = await residentMegabytes(child.pid);

    const relative = (file: string) => path.relative(process.cwd(), file) || file;
    console.log(
      [
        "",
        `Ready: kube-apiserver ${version.gitVersion ?? "?"} with etcd at ${server}`,
        `  /readyz after ${readyAfter}; CRDs installed after ${seconds(launchedAt)} (${seconds(startedAt)} in all)` +
          (rss === undefined ? "" : `; resident memory ${rss} MB`),
        `  CRDs: ${crds.join(", ")}`,
        `  admin:  kubectl --kubeconfig ${relative(options.kubeconfig)} get vm -A`,
        ...(options.bffKubeconfig === undefined
          ? []
          : [
              `  BFF:    kubeconfig ${relative(options.bffKubeconfig)}, service account ` +
                `${bffServiceAccount.namespace}/${bffServiceAccount.name} with deploy/base's RBAC`,
            ]),
        `  log:    ${relative(logFile)}`,
        "Ctrl-C stops it and removes its data.",
      ].join("\n"),
    );
  } catch (error) {
    if (!stopping) {
      stopping = true;
      await stop(child, exited);
    }
    throw error;
  }
  const [code, signal] = await exited;
  if (!stopping) {
    throw new SetupError(
      `real-apiserver stopped on its own (code ${code}, signal ${signal}); see ${logFile}`,
    );
  }
}

main().catch((error: unknown) => {
  if (error instanceof SetupError) console.error(`cluster:real: ${error.message}`);
  else console.error("cluster:real:", error);
  process.exit(1);
});
