// Bearer-token authentication. The admin token is kept in the state directory beside the CA, so a
// restarted emulator accepts the kubeconfig (and BFF configuration) written by the previous run.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import type { UserInfo } from "../rbac/attributes.ts";
import { authenticatedUser } from "../rbac/users.ts";

export interface TokenEntry {
  token: string;
  username: string;
  groups: string[];
}

export const adminUser: UserInfo = { username: "kubernetes-admin", groups: ["system:masters"] };

export function loadOrCreateAdminToken(stateDir: string): string {
  return loadOrCreateToken(stateDir, "admin-token");
}

/** A bearer token kept in a file of the state directory, made on first use. */
export function loadOrCreateToken(stateDir: string, fileName: string): string {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const path = join(stateDir, fileName);
  if (existsSync(path)) {
    const saved = readFileSync(path, "utf8").trim();
    if (saved !== "") return saved;
  }
  const token = randomBytes(24).toString("base64url");
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  return token;
}

export class TokenAuthenticator {
  private readonly entries: TokenEntry[];

  constructor(entries: TokenEntry[]) {
    this.entries = entries;
  }

  /**
   * The user behind the request's bearer token, or undefined. Groups are added as Kubernetes adds them:
   * system:authenticated for everyone, system:serviceaccounts(:<namespace>) for service accounts.
   */
  authenticate(request: IncomingMessage): UserInfo | undefined {
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match?.[1]) return undefined;
    const presented = Buffer.from(match[1]);
    const entry = this.entries.find((candidate) => {
      const known = Buffer.from(candidate.token);
      return known.length === presented.length && timingSafeEqual(known, presented);
    });
    if (!entry) return undefined;
    return authenticatedUser(entry.username, entry.groups);
  }
}
