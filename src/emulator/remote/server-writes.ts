// The controllers' changes to the local store as the requests the real API server takes: a create
// (then its status), a merge patch of what changed with the status apart, a binding for a pod's
// node, a guarded finalizer patch, a delete of exactly that uid. The server gives what the emulator
// creates uids of its own; these requests carry the server's, and the mirror (remote-mirror.ts)
// turns them back with localUid when it copies the server's answers in.
import { field, isJsonObject, type JsonObject, type KubeObject } from "../cluster/objects.ts";
import { namespaces, pods, type ResourceType } from "../cluster/resources.ts";
import type { StoreEvent } from "../apiserver/store.ts";
import { mergePatch } from "./merge-patch.ts";
import { isKubeObject, translated, withoutServerMetadata } from "./mirrored-objects.ts";
import { resourcePath, type RemoteAnswer, type RemoteApi } from "./remote-api.ts";

export class ServerWrites {
  /** Local uid to the server's, for what the emulator created. */
  private readonly serverUid = new Map<string, string>();
  /** The server's uid to the local one: what the mirror translates the server's objects with. */
  readonly localUid = new Map<string, string>();
  /** Server uids of objects deleted here: late news of them must not bring them back. */
  private readonly deleted = new Set<string>();

  constructor(
    private readonly api: Pick<RemoteApi, "request">,
    private readonly log: (line: string) => void,
    /** The server's answer to a change: the object as it now is there. */
    private readonly answered: (resource: ResourceType, object: KubeObject) => void,
  ) {}

  wasDeleted(serverUid: string): boolean {
    return this.deleted.has(serverUid);
  }

  async send(event: StoreEvent): Promise<void> {
    const { resource, object } = event;
    if (event.type === "ADDED") return this.sendCreate(resource, object);
    if (event.type === "DELETED") return this.sendDelete(resource, object);
    const previous = event.previous ?? object;
    if (object.metadata.deletionTimestamp && !previous.metadata.deletionTimestamp) {
      return this.sendDelete(resource, object);
    }
    await this.sendChange(resource, previous, object);
  }

  private async sendCreate(resource: ResourceType, object: KubeObject): Promise<void> {
    const namespace = object.metadata.namespace ?? "";
    const body = translated(withoutServerMetadata(object), this.serverUid);
    let answer = await this.api.request("POST", resourcePath(resource, namespace), body);
    if (answer.status === 409 && resource === namespaces) return;
    // Made on the server meanwhile (by another writer, or by a create whose answer was lost): that
    // object is the one the controllers' changes now go to.
    if (answer.status === 409)
      answer = await this.api.request("GET", resourcePath(resource, namespace, object.metadata.name));
    if (!this.accepted(answer, `creating ${resource.kind} ${namespace}/${object.metadata.name}`)) return;
    const created = answer.body as KubeObject;
    this.serverUid.set(object.metadata.uid, created.metadata.uid);
    this.localUid.set(created.metadata.uid, object.metadata.uid);
    if (resource.hasStatusSubresource && isJsonObject(object.status) && resource !== namespaces) {
      const status = translated(object.status, this.serverUid);
      answer = await this.patch(resource, object, { status }, "status");
    }
    this.remember(resource, answer);
  }

  private async sendChange(resource: ResourceType, previous: KubeObject, object: KubeObject): Promise<void> {
    const before = translated(withoutServerMetadata(previous), this.serverUid);
    const after = translated(withoutServerMetadata(object), this.serverUid);
    const { status: statusBefore, ...mainBefore } = before;
    const { status: statusAfter, ...mainAfter } = after;
    if (resource === pods) {
      const node = field(after, "spec", "nodeName");
      if (typeof node === "string" && field(before, "spec", "nodeName") !== node)
        await this.bind(object, node);
      delete mainBefore.spec;
      delete mainAfter.spec;
    }
    const splitStatus = resource.hasStatusSubresource;
    const main = mergePatch(splitStatus ? mainBefore : before, splitStatus ? mainAfter : after);
    const finalizers = isJsonObject(main?.metadata) && "finalizers" in main.metadata;
    if (main && finalizers) {
      await this.sendFinalizers(resource, object, field(before, "metadata", "finalizers"));
      delete (main.metadata as JsonObject).finalizers;
      if (Object.keys(main.metadata as JsonObject).length === 0) delete main.metadata;
    }
    if (main && Object.keys(main).length > 0)
      this.remember(resource, await this.patch(resource, object, main));
    if (!splitStatus) return;
    const status = mergePatch({ status: statusBefore }, { status: statusAfter });
    if (status) this.remember(resource, await this.patch(resource, object, status, "status"));
  }

  /**
   * Finalizers are a list another writer changes too (the API server adds foregroundDeletion): they
   * are replaced only if the server still has what this change started from. If it does not, the
   * watch brings the server's list and the controllers decide again.
   */
  private async sendFinalizers(resource: ResourceType, object: KubeObject, before: unknown): Promise<void> {
    const path = resourcePath(resource, object.metadata.namespace ?? "", object.metadata.name);
    const patch = [
      // The server stores no empty list: [] there is a missing member, which `test` takes as null.
      {
        op: "test",
        path: "/metadata/finalizers",
        value: Array.isArray(before) && before.length > 0 ? before : null,
      },
      { op: "add", path: "/metadata/finalizers", value: object.metadata.finalizers ?? [] },
    ];
    const answer = await this.api.request("PATCH", path, patch, "application/json-patch+json");
    if (answer.status === 422) {
      this.log(
        `${resource.kind} ${object.metadata.name}'s finalizers changed on the server meanwhile; left to its controller`,
      );
      return;
    }
    this.remember(resource, answer);
  }

  private async bind(pod: KubeObject, node: string): Promise<void> {
    const namespace = pod.metadata.namespace ?? "";
    const binding = {
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name: pod.metadata.name, namespace },
      target: { apiVersion: "v1", kind: "Node", name: node },
    };
    const answer = await this.api.request(
      "POST",
      resourcePath(pods, namespace, pod.metadata.name, "binding"),
      binding,
    );
    this.accepted(answer, `binding pod ${namespace}/${pod.metadata.name} to ${node}`);
  }

  private async sendDelete(resource: ResourceType, object: KubeObject): Promise<void> {
    const namespace = object.metadata.namespace ?? "";
    const serverUid = this.serverUid.get(object.metadata.uid) ?? object.metadata.uid;
    const body = {
      apiVersion: "v1",
      kind: "DeleteOptions",
      // Only this object: a new one of the same name (a restart's next VMI) is not this delete's.
      preconditions: { uid: serverUid },
      // As the kubelet confirms a pod's end: without one, a graceful delete would wait forever.
      ...(resource === pods ? { gracePeriodSeconds: 0 } : {}),
    };
    const answer = await this.api.request(
      "DELETE",
      resourcePath(resource, namespace, object.metadata.name),
      body,
    );
    if (
      answer.status === 404 ||
      this.accepted(answer, `deleting ${resource.kind} ${namespace}/${object.metadata.name}`)
    ) {
      this.deleted.add(serverUid);
    }
  }

  private patch(
    resource: ResourceType,
    object: KubeObject,
    patch: JsonObject,
    subresource?: string,
  ): Promise<RemoteAnswer> {
    const path = resourcePath(resource, object.metadata.namespace ?? "", object.metadata.name, subresource);
    return this.api.request("PATCH", path, patch, "application/merge-patch+json");
  }

  private remember(resource: ResourceType, answer: RemoteAnswer): void {
    if (answer.status === 404) return;
    if (!this.accepted(answer, `changing a ${resource.kind}`)) return;
    if (!isKubeObject(answer.body)) return;
    this.answered(resource, answer.body);
  }

  private accepted(answer: RemoteAnswer, what: string): boolean {
    if (answer.status >= 200 && answer.status < 300) return true;
    this.log(`the API server refused ${what}: ${describeAnswer(answer)}`);
    return false;
  }
}

/** For a log line: the status and the server's reason. */
export function describeAnswer(answer: RemoteAnswer): string {
  const message = isJsonObject(answer.body) ? answer.body.message : answer.body;
  return `HTTP ${answer.status}${message ? `: ${String(message)}` : ""}`;
}
