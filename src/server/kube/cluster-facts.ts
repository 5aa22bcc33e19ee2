// Read-only facts about the cluster, for the doctor and the capacity estimate: versions, KubeVirt's
// configuration, nodes, the VM namespace, the API server's feature gates and what the console's own
// credentials allow. Like client.ts, the only place that knows these API paths.
import { request as httpsRequest, type RequestOptions } from "node:https";
import {
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  VersionApi,
  type KubeConfig,
} from "@kubernetes/client-node";
import { countedCalls } from "./api-call.ts";
import { apiUrl } from "./api-url.ts";
import { ClusterUnavailableError, KubeStatusError } from "./errors.ts";
import { applyToRequestOptions } from "./kept-alive.ts";
import type { KubeRequestCounter } from "./request-counter.ts";
import type { ObjectMeta } from "./types.ts";

/** The KubeVirt custom resource, only the fields the console reads. */
export interface KubeVirt {
  metadata: ObjectMeta;
  spec?: {
    configuration?: {
      developerConfiguration?: {
        featureGates?: string[];
        disabledFeatureGates?: string[];
        cpuAllocationRatio?: number;
      };
      virtualMachineOptions?: { disableSerialConsoleLog?: Record<string, never> };
      additionalGuestMemoryOverheadRatio?: string;
    };
  };
  status?: { phase?: string; observedKubeVirtVersion?: string };
}

export interface Node {
  metadata: ObjectMeta;
  spec?: { unschedulable?: boolean };
  status?: {
    allocatable?: Record<string, string>;
    conditions?: { type: string; status: string }[];
    nodeInfo?: { containerRuntimeVersion?: string; kubeletVersion?: string };
  };
}

export interface Namespace {
  metadata: ObjectMeta;
  status?: { phase?: string };
}

/** What a SelfSubjectAccessReview asks: may the console's own identity do this? */
export type AccessQuestion =
  | {
      verb: string;
      group: string;
      resource: string;
      subresource?: string;
      /** Empty or absent: cluster-wide. */
      namespace?: string;
      name?: string;
    }
  | { verb: string; path: string };

export interface ClusterFacts {
  /** The API server's gitVersion, e.g. v1.34.1. */
  kubernetesVersion(): Promise<string>;
  /** The KubeVirt custom resource (there is one per cluster), or undefined when KubeVirt is not installed. */
  kubeVirt(): Promise<KubeVirt | undefined>;
  nodes(): Promise<Node[]>;
  /** Undefined when the namespace does not exist. */
  namespace(name: string): Promise<Namespace | undefined>;
  /** Asks the API server whether the console's credentials allow it (SelfSubjectAccessReview). */
  canI(question: AccessQuestion): Promise<boolean>;
  /** The API server's /metrics text (Prometheus format). */
  apiServerMetrics(): Promise<string>;
}

const maxMetricsBytes = 16 * 1024 * 1024;

export function createClusterFacts(kubeConfig: KubeConfig, counter: KubeRequestCounter): ClusterFacts {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
  const versions = kubeConfig.makeApiClient(VersionApi);
  const authorization = kubeConfig.makeApiClient(AuthorizationV1Api);

  const send = countedCalls(counter);

  return {
    async kubernetesVersion() {
      return (await send("get", () => versions.getCodeWithHttpInfo())).gitVersion;
    },
    async kubeVirt() {
      const list = (await send("list", () =>
        customObjects.listClusterCustomObjectWithHttpInfo({
          group: "kubevirt.io",
          version: "v1",
          plural: "kubevirts",
        }),
      )) as { items?: KubeVirt[] };
      return list.items?.[0];
    },
    async nodes() {
      const list = await send("list", () => core.listNodeWithHttpInfo());
      return list.items as Node[];
    },
    async namespace(name) {
      try {
        return (await send("get", () => core.readNamespaceWithHttpInfo({ name }))) as Namespace;
      } catch (error) {
        if (error instanceof KubeStatusError && error.statusCode === 404) return undefined;
        throw error;
      }
    },
    async canI(question) {
      const review = await send("create", () =>
        authorization.createSelfSubjectAccessReviewWithHttpInfo({
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SelfSubjectAccessReview",
            spec:
              "path" in question
                ? { nonResourceAttributes: { verb: question.verb, path: question.path } }
                : {
                    resourceAttributes: {
                      verb: question.verb,
                      group: question.group,
                      resource: question.resource,
                      ...(question.subresource ? { subresource: question.subresource } : {}),
                      ...(question.namespace ? { namespace: question.namespace } : {}),
                      ...(question.name ? { name: question.name } : {}),
                    },
                  },
          },
        }),
      );
      return review.status?.allowed === true;
    },
    async apiServerMetrics() {
      try {
        const { status, body } = await getText(kubeConfig, "/metrics");
        counter.record("get", status);
        if (status !== 200) throw new KubeStatusError(status, "", `GET /metrics answered ${status}: ${body}`);
        return body;
      } catch (error) {
        if (error instanceof KubeStatusError) throw error;
        counter.record("get", "error");
        throw new ClusterUnavailableError(error);
      }
    },
  };
}

/** A plain GET with the kubeconfig's credentials and CA, for paths the generated client has no call for. */
async function getText(kubeConfig: KubeConfig, path: string): Promise<{ status: number; body: string }> {
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) throw new Error("the kubeconfig names no cluster server");
  const url = apiUrl(server, path);
  const options: RequestOptions = { method: "GET", headers: { accept: "text/plain" } };
  await applyToRequestOptions(kubeConfig, options);
  return new Promise((resolve, reject) => {
    const request = httpsRequest(url, options, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxMetricsBytes)
          request.destroy(new Error(`${path} is larger than ${maxMetricsBytes} bytes`));
        else chunks.push(chunk);
      });
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
      response.on("error", reject);
    });
    request.setTimeout(10_000, () => request.destroy(new Error(`GET ${path} timed out`)));
    request.on("error", reject);
    request.end();
  });
}
