// Core v1 Events as KubeVirt's controllers and the scheduler record them, so `kubectl describe`
// shows what happened. Old events are dropped past a cap, standing in for the API server's event TTL.
import type { Registry } from "../apiserver/registry.ts";
import { timestamp, type KubeObject } from "../cluster/objects.ts";
import { events } from "../cluster/resources.ts";
import { ApiError } from "../http/status.ts";

const maxEvents = 2000;

export class EventRecorder {
  private readonly recorded: { namespace: string; name: string }[] = [];
  private sequence = 0;

  constructor(private readonly registry: Registry) {}

  record(
    involved: KubeObject,
    type: "Normal" | "Warning",
    reason: string,
    message: string,
    component: string,
  ): void {
    try {
      this.create(involved, type, reason, message, component);
    } catch (error) {
      // A namespace being deleted takes no new events; the event is simply lost, as in a cluster.
      if (!(error instanceof ApiError)) throw error;
    }
  }

  private create(
    involved: KubeObject,
    type: string,
    reason: string,
    message: string,
    component: string,
  ): void {
    const namespace = involved.metadata.namespace ?? "default";
    const now = timestamp();
    // Like the client-go recorder: name plus the time in hex, so names sort in the order events happened.
    const nanoseconds = BigInt(Date.now()) * 1_000_000n + BigInt(this.sequence++ % 1_000_000);
    const event = this.registry.create(events, {
      metadata: { name: `${involved.metadata.name}.${nanoseconds.toString(16)}`, namespace },
      involvedObject: {
        apiVersion: involved.apiVersion,
        kind: involved.kind,
        name: involved.metadata.name,
        namespace,
        uid: involved.metadata.uid,
        resourceVersion: involved.metadata.resourceVersion,
      },
      reason,
      message,
      type,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component },
      reportingComponent: component,
      reportingInstance: "",
    });
    this.recorded.push({ namespace, name: event.metadata.name });
    while (this.recorded.length > maxEvents) {
      const oldest = this.recorded.shift();
      if (oldest && this.registry.find(events, oldest.namespace, oldest.name)) {
        this.registry.delete(events, oldest.namespace, oldest.name);
      }
    }
  }
}
