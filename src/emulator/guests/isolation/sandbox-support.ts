// Which sandbox backend works on this host, found by starting a tiny sandbox with each in turn (as a
// guest's user, opening a pty as a guest's console does), or what to install when none does. Apart
// from building the sandbox's command line (sandbox.ts): this is asked once per process, at start-up
// and by each startGuest, and is the one place that runs a sandbox without a guest in it.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { allocateGuestUid, releaseGuestUid } from "./guest-uids.ts";
import {
  GUEST_UID,
  SANDBOX_PATH,
  asUser,
  runsPrivileged,
  sandboxLaunch,
  type SandboxBackend,
  type SandboxLaunch,
  type SandboxPlan,
} from "./sandbox.ts";

export type SandboxSupport = { ok: true; backend: SandboxBackend } | { ok: false; message: string };

const probes = new Map<string, Promise<SandboxSupport>>();

/**
 * The backends guests may use, in order of preference. As root, bubblewrap (the fastest) and unshare.
 * Without root only unshare: its setup script is root of the user namespace that owns the guest's
 * network namespace, so it can open ports below 1024 to the guest (the grading agent's 899), which
 * bubblewrap cannot do without root.
 */
export function guestBackends(privileged = runsPrivileged()): SandboxBackend[] {
  return privileged ? ["bwrap", "unshare"] : ["unshare"];
}

/**
 * Which backend works on this host (tried by starting a tiny sandbox), or a message that says what to
 * install. `only` restricts the choice to one backend. Cached per process.
 */
export function sandboxAvailable(only?: SandboxBackend): Promise<SandboxSupport> {
  const key = only ?? "any";
  let probe = probes.get(key);
  if (!probe) {
    probe = detectSandbox(only ? [only] : guestBackends(), SANDBOX_PATH);
    probes.set(key, probe);
  }
  return probe;
}

/** Tries the backends in order, looking their programs up in `searchPath`. */
export async function detectSandbox(backends: SandboxBackend[], searchPath: string): Promise<SandboxSupport> {
  if (process.platform !== "linux") {
    return { ok: false, message: `Guests run in Linux namespaces; this host is ${process.platform}.` };
  }
  const failures: string[] = [];
  for (const backend of backends) {
    const failure = await probe(backend, searchPath);
    if (failure === undefined) return { ok: true, backend };
    failures.push(`- ${backendHelp[backend]}: ${failure}`);
  }
  return {
    ok: false,
    message: ["Guests need a sandbox, and none works on this host:", ...failures].join("\n"),
  };
}

const backendHelp: Record<SandboxBackend, string> = {
  bwrap: 'bubblewrap (install the "bubblewrap" package, e.g. apt-get install bubblewrap)',
  unshare:
    'unshare (install the "util-linux" and "iproute2" packages; without root it needs unprivileged user namespaces)',
};

/** Starts a sandbox that opens a pty as the guest user; returns why it failed, or undefined. */
async function probe(backend: SandboxBackend, searchPath: string): Promise<string | undefined> {
  const rootMountPoint = await mkdtemp(join(tmpdir(), "lab-guest-probe-"));
  const privileged = runsPrivileged();
  // As root the probe's user is a uid no host account has, as a guest's user is (guest-uids.ts).
  const uid = privileged ? await allocateGuestUid() : GUEST_UID;
  const plan: SandboxPlan = {
    hostname: "probe",
    directories: [],
    writable: [],
    readOnly: [],
    workDir: "/",
    rootMountPoint,
    command: [...asUser(uid, privileged), "script", "-qec", "true", "/dev/null"],
  };
  try {
    return await runToCompletion(sandboxLaunch(plan, backend, privileged), searchPath);
  } finally {
    if (privileged) releaseGuestUid(uid);
    await rm(rootMountPoint, { recursive: true, force: true });
  }
}

function runToCompletion(launch: SandboxLaunch, searchPath: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(launch.file, launch.args, {
      stdio: ["ignore", "ignore", "pipe"],
      env: { PATH: searchPath },
      timeout: 10_000,
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.once("error", (error: NodeJS.ErrnoException) =>
      resolve(error.code === "ENOENT" ? `${launch.file} is not installed` : error.message),
    );
    child.once("close", (code, signal) => {
      if (code === 0) resolve(undefined);
      else resolve(stderr.trim() || `${launch.file} exited with ${signal ?? `code ${code}`}`);
    });
  });
}
