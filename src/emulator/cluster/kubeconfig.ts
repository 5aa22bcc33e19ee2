// The kubeconfig the emulator writes on start, so `kubectl --kubeconfig .lab/kubeconfig` and
// @kubernetes/client-node reach it with full TLS verification and a bearer token. The real cluster
// (src/real-cluster/bff-account.ts) writes its service account's kubeconfig with it too.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { stringify } from "yaml";

export const kubeconfigContext = "lab-emulator";

export interface KubeconfigInput {
  server: string;
  caCertPem: string;
  token: string;
  /** The user's name in the file; default lab-admin. */
  user?: string;
  /** The context's default namespace; default "default". */
  namespace?: string;
  /** The cluster's and the context's name; default lab-emulator. */
  name?: string;
}

export function renderKubeconfig(options: KubeconfigInput): string {
  const user = options.user ?? "lab-admin";
  const name = options.name ?? kubeconfigContext;
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name,
        cluster: {
          server: options.server,
          "certificate-authority-data": Buffer.from(options.caCertPem).toString("base64"),
        },
      },
    ],
    users: [{ name: user, user: { token: options.token } }],
    contexts: [
      {
        name,
        context: { cluster: name, user, namespace: options.namespace ?? "default" },
      },
    ],
    "current-context": name,
  });
}

export function writeKubeconfig(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  // It holds a bearer token (the admin's, or a service account's).
  writeFileSync(path, content, { mode: 0o600 });
  // The mode above applies only to a new file; one left by an earlier run keeps its own.
  chmodSync(path, 0o600);
}
