// The real-apiserver binary built from the current Go sources. A build takes minutes cold (and 6-12 s
// warm), so each binary is cached under .lab/real-apiserver/bin/, named by a hash of everything it is
// built from: a start with nothing changed only hashes a few files.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, existsSync } from "node:fs";
import { mkdir, readFile, readdir, rename, rm } from "node:fs/promises";
import { setPriority } from "node:os";
import path from "node:path";
import { goVersionLine, readGoModule, type GoModule } from "./go-toolchain.ts";
import { cacheDir, goModuleDir, projectRoot } from "./locations.ts";
import { SetupError } from "./setup-error.ts";

export function linkFlags(mod: GoModule): string {
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

/** What a binary is built from: the Go files, go.mod and go.sum in `dir`, the toolchain, the link flags. */
export async function sourceHash(dir: string, goVersion: string, ldflags: string): Promise<string> {
  const hash = createHash("sha256");
  hash.update(`${goVersion}\n${ldflags}\n`);
  const names = (await readdir(dir))
    .filter((name) => name.endsWith(".go") || name === "go.mod" || name === "go.sum")
    .sort();
  for (const name of names) {
    hash.update(`${name}\0`);
    hash.update(await readFile(path.join(dir, name)));
    hash.update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/** The path of a binary built from the current sources: the cached one, or a fresh build. */
export async function realApiserverBinary(log: (line: string) => void): Promise<string> {
  const mod = await readGoModule();
  const goVersion = await goVersionLine(mod);
  const ldflags = linkFlags(mod);
  const target = path.join(
    cacheDir,
    "bin",
    `real-apiserver-${await sourceHash(goModuleDir, goVersion, ldflags)}`,
  );
  if (existsSync(target)) {
    log(`real-apiserver: cached build ${path.relative(projectRoot, target)}`);
    return target;
  }
  log(
    `real-apiserver: building kube-apiserver ${mod.kubernetes} and etcd ${mod.etcd} with ${goVersion.replace(/^go version /, "")}` +
      ` (the first build downloads the modules and compiles for several minutes; later ones are cached)...`,
  );
  const buildStart = Date.now();
  await build(target, ldflags, `k8s.io/kubernetes ${mod.kubernetes}, etcd ${mod.etcd}, ${goVersion}`);
  log(`real-apiserver: built in ${((Date.now() - buildStart) / 1000).toFixed(1)} s`);
  // Older builds are ~100 MB each: keep only this one.
  for (const name of await readdir(path.dirname(target))) {
    if (name !== path.basename(target)) await rm(path.join(path.dirname(target), name), { force: true });
  }
  return target;
}

/** `go build` into `target`, its output into build.log; on failure, its last lines in the error. */
async function build(target: string, ldflags: string, versions: string): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const logFile = path.join(cacheDir, "build.log");
  // Built beside the target and renamed, so a build cut short never passes for a cached one.
  const partial = `${target}.partial`;
  const log = createWriteStream(logFile);
  const child = spawn("go", ["build", "-trimpath", "-ldflags", ldflags, "-o", partial, "."], {
    cwd: goModuleDir,
    env: { ...process.env, CGO_ENABLED: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The machine is shared (QEMU guests, other tests): the compile takes what is left over. The
  // compiler processes go starts later inherit this.
  if (child.pid !== undefined) {
    try {
      setPriority(child.pid, 19);
    } catch {
      // Not allowed to lower it (unusual): the build still works, only less politely.
    }
  }
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const [code] = (await once(child, "close")) as [number | null];
  log.end();
  if (code !== 0) {
    const output = (await readFile(logFile, "utf8")).trimEnd().split("\n").slice(-30).join("\n");
    throw new SetupError(
      `The Go build of cluster/real-apiserver failed (exit ${code}; ${versions}). ` +
        `Its last lines (all in ${path.relative(projectRoot, logFile)}):\n${output}`,
    );
  }
  await rename(partial, target);
}
