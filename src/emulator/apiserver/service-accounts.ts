// Service-account identities: a bearer token per service account (kept in the state directory, so a
// restarted emulator still accepts kubeconfigs written earlier) and a kubeconfig that uses it, with
// the same server and CA as the admin's. The BFF runs with such a kubeconfig so that, even locally, it
// has exactly the permissions deploy/ gives its service account.
import { renderKubeconfig, writeKubeconfig } from "../cluster/kubeconfig.ts";
import { serviceAccountUsername } from "../rbac/users.ts";
import type { TokenEntry } from "./authentication.ts";
import { loadOrCreateToken } from "./authentication.ts";

export interface ServiceAccountKubeconfig {
  namespace: string;
  name: string;
  /** Where the kubeconfig is written. */
  path: string;
}

const namespacePattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const namePattern = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** Reads the `NAMESPACE/NAME=PATH` of --service-account-kubeconfig. */
export function parseServiceAccountKubeconfig(value: string): ServiceAccountKubeconfig {
  const match = /^([^/=]+)\/([^/=]+)=(.+)$/.exec(value);
  if (!match?.[1] || !match[2] || !match[3]) {
    throw new Error(`--service-account-kubeconfig wants NAMESPACE/NAME=PATH, got "${value}"`);
  }
  const account = { namespace: match[1], name: match[2], path: match[3] };
  checkServiceAccount(account);
  return account;
}

export function checkServiceAccount(account: { namespace: string; name: string }): void {
  if (!namespacePattern.test(account.namespace) || account.namespace.length > 63) {
    throw new Error(`"${account.namespace}" is not a valid namespace name`);
  }
  if (!namePattern.test(account.name) || account.name.length > 253) {
    throw new Error(`"${account.name}" is not a valid service account name`);
  }
}

/** The token of each service account, made on first use. */
export function serviceAccountTokens(stateDir: string, accounts: ServiceAccountKubeconfig[]): TokenEntry[] {
  return accounts.map((account) => {
    checkServiceAccount(account);
    // A namespace has no dots, so the first one separates it from the name.
    const token = loadOrCreateToken(stateDir, `serviceaccount-token.${account.namespace}.${account.name}`);
    return { token, username: serviceAccountUsername(account.namespace, account.name), groups: [] };
  });
}

export function writeServiceAccountKubeconfig(
  account: ServiceAccountKubeconfig,
  token: string,
  cluster: { server: string; caCertPem: string },
): void {
  writeKubeconfig(
    account.path,
    renderKubeconfig({
      ...cluster,
      token,
      user: serviceAccountUsername(account.namespace, account.name),
      // What an in-cluster client gets: the namespace of its own service account.
      namespace: account.namespace,
    }),
  );
}
