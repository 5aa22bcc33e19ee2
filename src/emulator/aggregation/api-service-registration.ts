// Registers the aggregated server with the real kube-apiserver as virt-operator registers virt-api
// (KubeVirt v1.9.0 pkg/virt-operator/resource/generate/components/apiservices.go): one APIService per
// version of subresources.kubevirt.io, groupPriorityMinimum 1000, versionPriority 15, backed by the
// Service virt-api in namespace kubevirt, with the serving CA as caBundle. Two things differ because
// there are no pods and no kube-proxy here. The Service is an ExternalName for the host the server
// listens on, since kube-aggregator, routing to Services (no --enable-aggregator-routing), dials an
// ExternalName Service's name directly (k8s.io/apiserver v0.34.3 pkg/util/proxy/proxy.go ResolveCluster)
// and skips the endpoint checks it makes for a ClusterIP one (k8s.io/kube-aggregator v0.34.3
// pkg/controllers/status/remote/remote_available_controller.go). And the APIService names the server's
// own port where virt-operator leaves the default 443: for an ExternalName, ResolveCluster takes the
// APIService's port as the one to dial. Everything is server-side applied, so a restarted emulator
// takes the APIServices over with its new port and CA.
import type { KubeConfig } from "@kubernetes/client-node";
import { subresourcesGroup } from "../cluster/resources.ts";
import { RemoteApi, statusMessage, type KubeRequest } from "../remote/remote-api.ts";
import { subresourceVersions, virtApiService } from "./virt-api-service.ts";

export interface ApiServiceRegistration {
  /** Where kube-apiserver reaches the server: the ExternalName. Default 127.0.0.1. */
  host?: string;
  port: number;
  /** The serving certificate's CA (PEM). */
  caBundlePem: string;
  /** How long to wait for every APIService to be Available; default 60 s. */
  timeoutMs?: number;
}

const fieldManager = "lab-console-emulator";
const applyQuery = `?fieldManager=${fieldManager}&force=true`;

/** virt-api's app label (staging/src/kubevirt.io/api/core/v1/types.go AppLabel). */
const labels = { "kubevirt.io": "virt-api-aggregator" };

export function apiServiceName(version: string): string {
  return `${version}.${subresourcesGroup}`;
}

async function apply(
  kubeRequest: KubeRequest,
  path: string,
  object: { apiVersion: string; kind: string; metadata: unknown; spec?: unknown },
): Promise<void> {
  const answer = await kubeRequest("PATCH", `${path}${applyQuery}`, object, "application/apply-patch+yaml");
  if (answer.status !== 200 && answer.status !== 201) {
    throw new Error(
      `Applying the ${object.kind} at ${path} was refused (HTTP ${answer.status}): ${statusMessage(answer)}`,
    );
  }
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

async function availableCondition(kubeRequest: KubeRequest, name: string): Promise<Condition | undefined> {
  const answer = await kubeRequest("GET", `/apis/apiregistration.k8s.io/v1/apiservices/${name}`);
  if (answer.status !== 200) {
    throw new Error(`Reading APIService ${name} failed (HTTP ${answer.status}): ${statusMessage(answer)}`);
  }
  const conditions = (answer.body as { status?: { conditions?: Condition[] } }).status?.conditions ?? [];
  return conditions.find((condition) => condition.type === "Available");
}

/**
 * Waits for kube-aggregator's availability controller to call the APIService Available (it checks on
 * every change of the APIService or Service, so this polls the condition it writes).
 */
async function untilAvailable(kubeRequest: KubeRequest, name: string, deadline: number): Promise<void> {
  for (;;) {
    const condition = await availableCondition(kubeRequest, name);
    if (condition?.status === "True") return;
    if (Date.now() > deadline) {
      const why =
        condition === undefined
          ? "it has no Available condition yet"
          : `Available is ${condition.status} (${condition.reason}): ${condition.message}`;
      throw new Error(`APIService ${name} did not become Available: ${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function registerSubresourcesApiService(
  kubeConfig: KubeConfig,
  registration: ApiServiceRegistration,
): Promise<void> {
  const api = new RemoteApi(kubeConfig);
  try {
    await applyRegistration(api.request, registration);
  } finally {
    api.close();
  }
}

async function applyRegistration(
  kubeRequest: KubeRequest,
  registration: ApiServiceRegistration,
): Promise<void> {
  const { namespace, name } = virtApiService;
  const host =
    registration.host === undefined || registration.host === "0.0.0.0" ? "127.0.0.1" : registration.host;
  await apply(kubeRequest, `/api/v1/namespaces/${namespace}`, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace },
  });
  await apply(kubeRequest, `/api/v1/namespaces/${namespace}/services/${name}`, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, labels },
    // virt-api's Service listens on 443; the port that counts for an ExternalName is the APIService's.
    spec: { type: "ExternalName", externalName: host, ports: [{ port: 443, targetPort: registration.port }] },
  });
  for (const version of subresourceVersions) {
    await apply(kubeRequest, `/apis/apiregistration.k8s.io/v1/apiservices/${apiServiceName(version)}`, {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: apiServiceName(version), labels },
      spec: {
        service: { namespace, name, port: registration.port },
        group: subresourcesGroup,
        version,
        caBundle: Buffer.from(registration.caBundlePem).toString("base64"),
        groupPriorityMinimum: 1000,
        versionPriority: 15,
      },
    });
  }
  const deadline = Date.now() + (registration.timeoutMs ?? 60_000);
  for (const version of subresourceVersions) {
    await untilAvailable(kubeRequest, apiServiceName(version), deadline);
  }
}

/** Deletes the APIServices again (the Service and namespace stay, as virt-operator's would). */
export async function unregisterSubresourcesApiService(kubeConfig: KubeConfig): Promise<void> {
  const api = new RemoteApi(kubeConfig);
  try {
    for (const version of subresourceVersions) {
      await api.request("DELETE", `/apis/apiregistration.k8s.io/v1/apiservices/${apiServiceName(version)}`);
    }
  } finally {
    api.close();
  }
}
