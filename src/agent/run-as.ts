// Whom checks run as, and the command line that gets them there.
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { userInfo } from "node:os";
import type { AgentConfig } from "./config.ts";
import { HttpError } from "./http-io.ts";

export interface RunAs {
  user: string;
  uid: number;
  gid: number;
  home: string;
  /** True when the agent is root and the checks' user is not. */
  switchUser: boolean;
}

export const defaultCheckUser = "student";

const isRoot = () => process.getuid?.() === 0;

/**
 * Resolved per request, not at start-up: cloud-init creates the student's account while the agent
 * may already be running. Only /etc/passwd is read (cloud-init's users live there; directory
 * services such as LDAP are not consulted).
 */
export async function resolveRunAs(
  config: Pick<AgentConfig, "user" | "home">,
  passwdFile = "/etc/passwd",
): Promise<RunAs> {
  const runAs = isRoot() ? await fromPasswd(config.user ?? defaultCheckUser, passwdFile) : ownAccount();
  const home = config.home ?? runAs.home;
  const isDirectory = await stat(home).then(
    (info) => info.isDirectory(),
    () => false,
  );
  if (!isDirectory) {
    throw unavailable(`The home directory ${home} of user "${runAs.user}" does not exist.`);
  }
  return { ...runAs, home };
}

/** A configured user that a non-root agent cannot become: it runs checks as itself instead. */
export function runAsMismatch(config: Pick<AgentConfig, "user">): string | null {
  if (isRoot() || config.user === null || config.user === userInfo().username) return null;
  return `lab-agent: not running as root, so checks run as "${userInfo().username}", not "${config.user}".`;
}

async function fromPasswd(user: string, passwdFile: string): Promise<RunAs> {
  const entries = (await readFile(passwdFile, "utf8")).split("\n");
  const fields = entries.map((line) => line.split(":")).find((entry) => entry[0] === user);
  const [, , uid, gid, , home] = fields ?? [];
  if (uid === undefined || gid === undefined || home === undefined) {
    throw unavailable(`There is no user "${user}" in ${passwdFile} (yet).`);
  }
  const uidNumber = Number(uid);
  return { user, uid: uidNumber, gid: Number(gid), home, switchUser: uidNumber !== 0 };
}

function ownAccount(): RunAs {
  const me = userInfo();
  return { user: me.username, uid: me.uid, gid: me.gid, home: me.homedir, switchUser: false };
}

export interface Launch {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/**
 * How to start one check. Switching users goes through setpriv rather than spawn's uid/gid:
 * Node drops all supplementary groups, and a check such as `virsh list` or `docker ps` run as the
 * student needs the student's groups (libvirt, docker, ...). setpriv's --init-groups sets them.
 */
export function launchFor(runAs: RunAs, command: string): Launch {
  const shell = existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";
  // A clean environment: the agent's own variables are none of the check's business.
  const env = {
    HOME: runAs.home,
    USER: runAs.user,
    LOGNAME: runAs.user,
    SHELL: shell,
    PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    LANG: "C.UTF-8",
  };
  const shellArgs = [shell, "-lc", command];
  if (!runAs.switchUser) {
    return { file: shell, args: shellArgs.slice(1), cwd: runAs.home, env };
  }
  const setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].find((path) => existsSync(path));
  if (!setpriv) throw unavailable(`setpriv (util-linux) is needed to run checks as "${runAs.user}".`);
  return {
    file: setpriv,
    args: [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, "--init-groups", "--", ...shellArgs],
    cwd: runAs.home,
    env,
  };
}

function unavailable(message: string): HttpError {
  return new HttpError(503, "run_as_unavailable", message);
}
