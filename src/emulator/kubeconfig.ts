// The kubeconfig the emulator writes on start, so `kubectl --kubeconfig .lab/kubeconfig` and
// @kubernetes/client-node reach it with full TLS verification and a bearer token.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { stringify } from "yaml";

export const kubeconfigContext = "lab-emulator";

export function renderKubeconfig(options: { server: string; caCertPem: string; token: string }): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: kubeconfigContext,
        cluster: {
          server: options.server,
          "certificate-authority-data": Buffer.from(options.caCertPem).toString("base64"),
        },
      },
    ],
    users: [{ name: "lab-admin", user: { token: options.token } }],
    contexts: [
      {
        name: kubeconfigContext,
        context: { cluster: kubeconfigContext, user: "lab-admin", namespace: "default" },
      },
    ],
    "current-context": kubeconfigContext,
  });
}

export function writeKubeconfig(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  // It holds a cluster-admin token.
  writeFileSync(path, content, { mode: 0o600 });
}
