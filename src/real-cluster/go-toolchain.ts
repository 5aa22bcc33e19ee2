// The Go that builds cluster/real-apiserver: what its go.mod asks for, and whether the `go` on PATH is
// there and new enough. Each missing piece gets a message that names it and what it is needed for.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { goModuleDir } from "./locations.ts";
import { SetupError } from "./setup-error.ts";

export interface GoModule {
  /** The Go version go.mod asks for, e.g. 1.24.0. */
  go: string;
  /** The k8s.io/kubernetes version, e.g. v1.34.3: what the server reports as its version. */
  kubernetes: string;
  etcd: string;
}

export function parseGoModule(text: string): GoModule {
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

export async function readGoModule(): Promise<GoModule> {
  return parseGoModule(await readFile(path.join(goModuleDir, "go.mod"), "utf8"));
}

/** Dotted versions compared number by number, a missing part as 0: 1.26.8 ≥ 1.24.0, 1.24 ≥ 1.24.0. */
export function versionAtLeast(have: string, want: string): boolean {
  const parts = (v: string) => v.split(".").map((n) => Number.parseInt(n, 10) || 0);
  const [a, b] = [parts(have), parts(want)];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const [x = 0, y = 0] = [a[i], b[i]];
    if (x !== y) return x > y;
  }
  return true;
}

/** `go version`'s line, e.g. "go version go1.26.8 linux/amd64"; a clear error without Go. */
export async function goVersionLine(mod: GoModule): Promise<string> {
  let output: string;
  try {
    ({ stdout: output } = await promisify(execFile)("go", ["version"], { cwd: goModuleDir }));
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
