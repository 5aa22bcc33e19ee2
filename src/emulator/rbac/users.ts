// Who a bearer token is, in the form Kubernetes' authenticators hand to the authorizer.
import type { UserInfo } from "./attributes.ts";

const serviceAccountPrefix = "system:serviceaccount:";

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${serviceAccountPrefix}${namespace}:${name}`;
}

/**
 * The groups Kubernetes adds on authentication: a service account's token carries
 * system:serviceaccounts and system:serviceaccounts:<namespace>, and every authenticated user is in
 * system:authenticated. RBAC bindings to those groups (discovery, for one) depend on them.
 */
export function authenticatedUser(username: string, groups: string[] = []): UserInfo {
  const all = [...groups];
  const serviceAccountNamespace = parseServiceAccountUsername(username)?.namespace;
  if (serviceAccountNamespace !== undefined) {
    all.push("system:serviceaccounts", `system:serviceaccounts:${serviceAccountNamespace}`);
  }
  all.push("system:authenticated");
  return { username, groups: [...new Set(all)] };
}

function parseServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(serviceAccountPrefix)) return undefined;
  const [namespace, name, ...rest] = username.slice(serviceAccountPrefix.length).split(":");
  if (!namespace || !name || rest.length > 0) return undefined;
  return { namespace, name };
}
