// The BFF's identity in a real cluster, as deploy/base gives it: the namespaces, the lab-console
// service account and its RBAC, and a kubeconfig with a token for that account, so the BFF runs with
// exactly the rights a deployed one has. The Deployment and the rest of deploy/base are not for a
// cluster without nodes.
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { renderKubeconfig, writeKubeconfig } from "../emulator/cluster/kubeconfig.ts";
import { createObject } from "./api-requests.ts";
import { projectRoot } from "./locations.ts";
import { SetupError } from "./setup-error.ts";

const bffManifests = [
  "namespaces.yaml",
  "serviceaccount.yaml",
  "rbac-sessions.yaml",
  "rbac-leases.yaml",
  "rbac-cluster.yaml",
];

/** deploy/base/serviceaccount.yaml. */
export const bffServiceAccount = { namespace: "lab-console", name: "lab-console" };

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

/** Creates the account with deploy/base's RBAC, and writes a kubeconfig with its token to `target`. */
export async function writeBffKubeconfig(admin: KubeConfig, target: string): Promise<void> {
  await createBffAccount(admin);
  const cluster = admin.getCurrentCluster();
  if (cluster?.caData === undefined) throw new Error("the admin kubeconfig has no cluster CA");
  const { namespace, name } = bffServiceAccount;
  const kubeconfig = renderKubeconfig({
    name: "lab-real",
    server: cluster.server,
    caCertPem: Buffer.from(cluster.caData, "base64").toString(),
    token: await requestToken(admin),
    user: `system:serviceaccount:${namespace}:${name}`,
    namespace: "lab-sessions",
  });
  writeKubeconfig(target, kubeconfig);
}

async function createBffAccount(admin: KubeConfig): Promise<void> {
  for (const file of bffManifests) {
    const text = await readFile(path.join(projectRoot, "deploy", "base", file), "utf8");
    for (const doc of parseAllDocuments(text)) {
      const object = doc.toJS() as Manifest | null;
      if (object === null) continue;
      const what = `deploy/base/${file}'s ${object.kind} ${object.metadata.name}`;
      await createObject(admin, collectionPath(object), object, what);
      if (object.kind === "Namespace") await createDefaultServiceAccount(admin, object.metadata.name);
    }
  }
}

/**
 * kube-controller-manager gives every namespace a `default` service account, and the ServiceAccount
 * admission plugin refuses a pod whose account does not exist: without it no launcher pod could be
 * created in lab-sessions. No controller manager runs here, so this stands in for it.
 */
async function createDefaultServiceAccount(admin: KubeConfig, namespace: string): Promise<void> {
  const account = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace } };
  await createObject(admin, collectionPath(account), account, `the default service account of ${namespace}`);
}

/**
 * A token from the TokenRequest API, as the kubelet projects into a pod: bound to the service account,
 * expiring (after a day, as the certificates do; the server is gone long before).
 */
async function requestToken(admin: KubeConfig): Promise<string> {
  const { namespace, name } = bffServiceAccount;
  const answer = (await createObject(
    admin,
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 24 * 3600 } },
    `a token for ${namespace}/${name}`,
  )) as { status?: { token?: string } };
  const token = answer.status?.token;
  if (token === undefined) throw new SetupError("The TokenRequest answered without a token.");
  return token;
}

/** The collection a manifest is created in. Only the kinds deploy/base's RBAC files hold. */
export function collectionPath(object: Manifest): string {
  const plural: Record<string, string> = {
    Namespace: "namespaces",
    ServiceAccount: "serviceaccounts",
    Role: "roles",
    RoleBinding: "rolebindings",
    ClusterRole: "clusterroles",
    ClusterRoleBinding: "clusterrolebindings",
  };
  const resource = plural[object.kind];
  if (resource === undefined)
    throw new Error(`cannot create a ${object.kind}: not one of deploy/base's kinds`);
  const prefix = object.apiVersion.includes("/") ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
  const namespace = object.metadata.namespace === undefined ? "" : `/namespaces/${object.metadata.namespace}`;
  return `${prefix}${namespace}/${resource}`;
}
