// All access to the Kubernetes API. Nothing else in the server builds an API path or sees the
// credentials; callers get typed objects, KubeStatusError or ClusterUnavailableError.
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  NetworkingV1Api,
  Observable,
  VersionApi,
  type ConfigurationOptions,
  type RequestContext,
  type ResponseContext,
  type V1NetworkPolicy,
  type V1Secret,
} from "@kubernetes/client-node";
import { countedCalls, statusError, translate } from "./api-call.ts";
import { apiUrl } from "./api-url.ts";
import { createConsoleConnector, createScreenConnector, type ConsoleConnector } from "./console-stream.ts";
import { KubeStatusError } from "./errors.ts";
import { createPortForwarder, type PortForwarder } from "./portforward.ts";
import { sendRaw } from "./raw-request.ts";
import type { KubeRequestCounter } from "./request-counter.ts";
import type { NetworkPolicy, Secret, VirtualMachine, VirtualMachineInstance } from "./types.ts";
import { openWatch } from "./watch-request.ts";
import type { WriteRate } from "./write-rate.ts";

export type ConfiguredCluster = { kind: "kubeconfig"; path: string } | { kind: "in-cluster" };

export function loadKubeConfig(source: ConfiguredCluster): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (source.kind === "in-cluster") kubeConfig.loadFromCluster();
  else kubeConfig.loadFromFile(source.path);
  if (!kubeConfig.getCurrentCluster()) {
    throw new Error(
      source.kind === "kubeconfig"
        ? `${source.path} has no current context with a cluster`
        : "the pod's service account did not yield a cluster",
    );
  }
  return kubeConfig;
}

export interface ResourceList<T> {
  items: T[];
  /** Opaque: only ever handed back to the API or compared for equality. */
  resourceVersion: string;
}

export type WatchEvent<T> =
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: T }
  | { type: "BOOKMARK"; resourceVersion: string }
  | { type: "ERROR"; error: KubeStatusError };

/**
 * A kind the console lists and watches: VMs and VMIs carrying the console's label, in its namespace.
 * Aborting the signal ends the request at once, whether or not the API server has answered yet.
 */
export interface WatchableResource<T> {
  list(signal?: AbortSignal): Promise<ResourceList<T>>;
  /**
   * Streams changes after `resourceVersion` until the server ends the stream or `signal` aborts it.
   * `onClosed` is called once: with null when the server ended the stream or the signal aborted it,
   * with an error when it failed (a refused watch included). Resolves once the stream is open or over.
   */
  watch(
    resourceVersion: string,
    onEvent: (event: WatchEvent<T>) => void,
    onClosed: (error: unknown) => void,
    signal: AbortSignal,
  ): Promise<void>;
}

export interface ClusterClient {
  readonly namespace: string;
  readonly virtualMachines: WatchableResource<VirtualMachine>;
  readonly virtualMachineInstances: WatchableResource<VirtualMachineInstance>;
  createVirtualMachine(vm: VirtualMachine): Promise<VirtualMachine>;
  /** Foreground deletion: the VM stays, marked for deletion, until its VMI is gone. Returns the API's answer. */
  /** With `resourceVersion`, only that version of it: a 409 when it changed since it was read. */
  deleteVirtualMachine(name: string, preconditions?: { resourceVersion: string }): Promise<unknown>;
  createSecret(secret: Secret): Promise<void>;
  /** Deletes a Secret of the VM namespace; one that is already gone counts as deleted. */
  deleteSecret(name: string): Promise<void>;
  /**
   * Applies a JSON patch (RFC 6902) to a session VM. Include `test` operations for what the change
   * assumes: if someone changed those fields meanwhile the API refuses it (422) and nothing changes.
   */
  patchVirtualMachine(name: string, operations: JsonPatchOperation[]): Promise<VirtualMachine>;
  /** NetworkPolicies of the VM namespace that match `labelSelector` (the console's lab policies). */
  listNetworkPolicies(labelSelector: string): Promise<NetworkPolicy[]>;
  createNetworkPolicy(policy: NetworkPolicy): Promise<void>;
  /** Replaces a policy's whole spec (a JSON patch), leaving its metadata as it is. */
  replaceNetworkPolicySpec(name: string, spec: NetworkPolicy["spec"]): Promise<void>;
  /** Deletes a policy; one that is already gone counts as deleted. */
  deleteNetworkPolicy(name: string): Promise<void>;
  /** KubeVirt's restart: a new VMI (new UID, same name) replaces the running one. 409 when not running. */
  restartVirtualMachine(name: string): Promise<void>;
  /**
   * KubeVirt's pause / unpause of a VMI: its vCPUs stop (or run again), its memory stays. 409 when
   * it is not running, already paused (pause) or not paused (unpause).
   */
  setVmiPaused(name: string, paused: boolean): Promise<void>;
  /** The API server's version string: proves it answers and accepts our credentials. */
  serverVersion(): Promise<string>;
  /**
   * The serial console log of a VMI (its launcher pod's guest-console-log container) as complete
   * lines; empty while the pod does not exist, has no node or its container waits to start.
   * `logging: "off"` when the pod has no such container.
   */
  readBootLog(vmiUid: string): Promise<SerialConsoleLog>;
  /**
   * The same log as text, within the pod log API's bounds (the last `tailLines` lines, of which the
   * first `limitBytes` bytes), for a console's first screen.
   */
  readConsoleLog(vmiUid: string, bounds: ConsoleLogBounds, signal?: AbortSignal): Promise<ConsoleLogText>;
  /** A websocket to a VMI's serial console (see console-stream.ts). */
  openConsole: ConsoleConnector;
  /** A websocket to a VMI's screen, QEMU's VNC server (see console-stream.ts). */
  openScreen: ConsoleConnector;
  /** A TCP connection to a port inside a VM (see portforward.ts). */
  portForward: PortForwarder;
}

export interface SerialConsoleLog {
  lines: string[];
  /**
   * "off": KubeVirt keeps no log for this VMI (logSerialConsole: false, the cluster's
   * disableSerialConsoleLog without a per-VM setting, no serial console, or a KubeVirt without the
   * feature), so none will come.
   */
  logging: "on" | "off";
}

/** The pod log API's bounds: the last `tailLines` lines, and of those the first `limitBytes` bytes. */
export interface ConsoleLogBounds {
  tailLines: number;
  limitBytes: number;
}

/** What the guest-console-log container printed; "off" as in SerialConsoleLog. */
export type ConsoleLogText = { logging: "on"; text: string } | { logging: "off" };

export type JsonPatchOperation =
  { op: "test" | "add" | "replace"; path: string; value: unknown } | { op: "remove"; path: string };

const kubevirt = { group: "kubevirt.io", version: "v1" } as const;
/** KubeVirt's virt-tail sidecar in the launcher pod, printing the guest's serial log. */
const bootLogContainer = "guest-console-log";
/** Enough to see a boot through, small enough to poll every few seconds. */
const bootLogTailLines = 500;

interface KubeList<T> {
  items?: T[];
  metadata?: { resourceVersion?: string };
}

export function createClusterClient(
  kubeConfig: KubeConfig,
  options: { namespace: string; labelSelector: string; counter: KubeRequestCounter; writeRate?: WriteRate },
): ClusterClient {
  const { namespace, labelSelector, counter } = options;
  const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const versions = kubeConfig.makeApiClient(VersionApi);
  const networking = kubeConfig.makeApiClient(NetworkingV1Api);

  const send = countedCalls(counter, options.writeRate);

  function kubevirtResource<T>(plural: string): WatchableResource<T> {
    return {
      async list(signal) {
        const list = await send("list", () =>
          customObjects.listNamespacedCustomObjectWithHttpInfo(
            { ...kubevirt, namespace, plural, labelSelector },
            signal && endedBy(signal),
          ),
        );
        const { items = [], metadata = {} } = list as KubeList<T>;
        return { items, resourceVersion: metadata.resourceVersion ?? "" };
      },
      async watch(resourceVersion, onEvent, onClosed, signal) {
        const server = kubeConfig.getCurrentCluster()?.server ?? "";
        const url = apiUrl(
          server,
          `/apis/${kubevirt.group}/${kubevirt.version}/namespaces/${encodeURIComponent(namespace)}/${plural}`,
        );
        url.search = new URLSearchParams({
          watch: "true",
          labelSelector,
          resourceVersion,
          allowWatchBookmarks: "true",
        }).toString();
        let failed = false;
        const status = await openWatch(kubeConfig, url, signal, {
          event: (value) => onEvent(toWatchEvent<T>(value)),
          closed: (error) => {
            failed = error !== null;
            onClosed(error === null ? null : translate(error));
          },
        });
        // A watch aborted before any answer was our choice, not an outcome of the cluster's.
        if (status !== undefined) counter.record("watch", status);
        else if (failed) counter.record("watch", "error");
      },
    };
  }

  return {
    namespace,
    virtualMachines: kubevirtResource<VirtualMachine>("virtualmachines"),
    virtualMachineInstances: kubevirtResource<VirtualMachineInstance>("virtualmachineinstances"),
    async createVirtualMachine(vm) {
      const created = await send("create", () =>
        customObjects.createNamespacedCustomObjectWithHttpInfo({
          ...kubevirt,
          namespace,
          plural: "virtualmachines",
          body: vm,
        }),
      );
      return created as VirtualMachine;
    },
    async deleteVirtualMachine(name, preconditions) {
      return send("delete", () =>
        customObjects.deleteNamespacedCustomObjectWithHttpInfo({
          ...kubevirt,
          namespace,
          plural: "virtualmachines",
          name,
          propagationPolicy: "Foreground",
          ...(preconditions ? { body: { preconditions } } : {}),
        }),
      );
    },
    async createSecret(secret) {
      await send("create", () =>
        // The generated client's V1Secret only differs from ours in optional fields it fills itself.
        core.createNamespacedSecretWithHttpInfo({ namespace, body: secret as V1Secret }),
      );
    },
    async deleteSecret(name) {
      try {
        await send("delete", () => core.deleteNamespacedSecretWithHttpInfo({ namespace, name }));
      } catch (error) {
        if (!(error instanceof KubeStatusError && error.statusCode === 404)) throw error;
      }
    },
    async patchVirtualMachine(name, operations) {
      // The generated client sends a patch body as application/json-patch+json by default.
      const patched = await send("patch", () =>
        customObjects.patchNamespacedCustomObjectWithHttpInfo({
          ...kubevirt,
          namespace,
          plural: "virtualmachines",
          name,
          body: operations,
        }),
      );
      return patched as VirtualMachine;
    },
    async listNetworkPolicies(policySelector) {
      const list = await send("list", () =>
        networking.listNamespacedNetworkPolicyWithHttpInfo({ namespace, labelSelector: policySelector }),
      );
      // The generated client's V1NetworkPolicy has every field optional; the API server fills them.
      return list.items as NetworkPolicy[];
    },
    async createNetworkPolicy(policy) {
      await send("create", () =>
        networking.createNamespacedNetworkPolicyWithHttpInfo({ namespace, body: policy as V1NetworkPolicy }),
      );
    },
    async replaceNetworkPolicySpec(name, spec) {
      // The generated client sends a patch body as application/json-patch+json by default.
      await send("patch", () =>
        networking.patchNamespacedNetworkPolicyWithHttpInfo({
          namespace,
          name,
          body: [{ op: "replace", path: "/spec", value: spec }],
        }),
      );
    },
    async deleteNetworkPolicy(name) {
      try {
        await send("delete", () => networking.deleteNamespacedNetworkPolicyWithHttpInfo({ namespace, name }));
      } catch (error) {
        if (!(error instanceof KubeStatusError && error.statusCode === 404)) throw error;
      }
    },
    async restartVirtualMachine(name) {
      const path = `/apis/subresources.kubevirt.io/v1/namespaces/${encodeURIComponent(namespace)}/virtualmachines/${encodeURIComponent(name)}/restart`;
      await send("update", async () => {
        const answer = await sendRaw(kubeConfig, "PUT", path, {});
        return { httpStatusCode: answer.status, data: answer.text };
      });
    },
    async setVmiPaused(name, paused) {
      const path = `/apis/subresources.kubevirt.io/v1/namespaces/${encodeURIComponent(namespace)}/virtualmachineinstances/${encodeURIComponent(name)}/${paused ? "pause" : "unpause"}`;
      await send("update", async () => {
        const answer = await sendRaw(kubeConfig, "PUT", path, {});
        return { httpStatusCode: answer.status, data: answer.text };
      });
    },
    async serverVersion() {
      const info = await send("get", () => versions.getCodeWithHttpInfo());
      return info.gitVersion;
    },
    async readBootLog(vmiUid) {
      const log = await readConsoleLog(vmiUid, { tailLines: bootLogTailLines });
      if (log.logging === "off") return { lines: [], logging: "off" };
      const lines = log.text.split("\n");
      // virt-tail prints complete lines only; anything after the last newline is not one yet.
      lines.pop();
      return { lines, logging: "on" };
    },
    readConsoleLog,
    openConsole: createConsoleConnector(kubeConfig, namespace),
    openScreen: createScreenConnector(kubeConfig, namespace),
    portForward: createPortForwarder(kubeConfig, namespace),
  };

  async function readConsoleLog(
    vmiUid: string,
    bounds: { tailLines: number; limitBytes?: number },
    signal?: AbortSignal,
  ): Promise<ConsoleLogText> {
    // KubeVirt names launcher pods by generateName, so the VMI's uid label is the only stable handle.
    const pods = await send("list", () =>
      core.listNamespacedPodWithHttpInfo(
        { namespace, labelSelector: `kubevirt.io/created-by=${vmiUid}` },
        signal && endedBy(signal),
      ),
    );
    const pod = pods.items.find((item) => item.metadata?.deletionTimestamp === undefined);
    const podName = pod?.metadata?.name;
    const nothingYet: ConsoleLogText = { logging: "on", text: "" };
    if (!pod || !podName) return nothingYet;
    // virt-controller adds the container only when logging is on (a native sidecar since KubeVirt
    // 1.6, a regular container before); asking for a missing one would be a 400.
    const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
    if (!containers.some((container) => container.name === bootLogContainer)) {
      return { logging: "off" };
    }
    // Not on a node yet: nothing can have printed, and the API server would answer 204 without a
    // Content-Type (no kubelet to ask), which the generated client cannot parse.
    if (!pod.spec?.nodeName) return nothingYet;
    try {
      const text = await send("get", () =>
        core.readNamespacedPodLogWithHttpInfo(
          { namespace, name: podName, container: bootLogContainer, ...bounds },
          signal && endedBy(signal),
        ),
      );
      return { logging: "on", text };
    } catch (error) {
      // The pod went away since the list (the VM stopped or restarted): its log went with it.
      if (error instanceof KubeStatusError && error.statusCode === 404) return nothingYet;
      if (isWaitingToStart(error)) return nothingYet;
      throw error;
    }
  }
}

/**
 * The kubelet's refusal while the container has not started yet (image pull, volume mounts, init
 * containers: `container "guest-console-log" in pod "…" is waiting to start: PodInitializing`), which
 * the API server passes on as a 400. Nothing was printed yet; it is not a fault of the lab's VM.
 */
function isWaitingToStart(error: unknown): boolean {
  return (
    error instanceof KubeStatusError &&
    error.statusCode === 400 &&
    error.message.includes("is waiting to start")
  );
}

/** Per-call options for the generated client: the request ends when `signal` aborts. */
function endedBy(signal: AbortSignal): ConfigurationOptions {
  return {
    middleware: [
      {
        pre(context: RequestContext) {
          context.setSignal(signal);
          return new Observable(Promise.resolve(context));
        },
        post: (response: ResponseContext) => new Observable(Promise.resolve(response)),
      },
    ],
    // Added to the client's own middleware, not in its place.
    middlewareMergeStrategy: "append",
  };
}

function toWatchEvent<T>(line: unknown): WatchEvent<T> {
  const { type, object } = (line ?? {}) as { type?: unknown; object?: unknown };
  if (type === "ADDED" || type === "MODIFIED" || type === "DELETED") return { type, object: object as T };
  if (type === "BOOKMARK") {
    const metadata = (object as { metadata?: { resourceVersion?: string } } | undefined)?.metadata;
    return { type, resourceVersion: metadata?.resourceVersion ?? "" };
  }
  return { type: "ERROR", error: statusError(object, 500) };
}
