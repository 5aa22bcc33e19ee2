// virt-controller's VM loop: keeps a VM's VMI in line with its runStrategy and pending state-change
// requests (start/stop/restart), creates the VMI from the template, deletes it to stop, and derives
// the VM's status. A deleted VM (it carries a finalizer) first stops its VMI, then goes away.
import { mutateNewVmi } from "../apiserver/admission/vmi-mutator.ts";
import type { Registry } from "../apiserver/registry.ts";
import { clone, field, isJsonObject, type JsonObject, type KubeObject } from "../cluster/objects.ts";
import { virtualMachineInstances, virtualMachines } from "../cluster/resources.ts";
import { ApiError } from "../http/status.ts";
import type { EventRecorder } from "./events.ts";
import {
  isFinal,
  isOwnedBy,
  phaseOf,
  runStrategyOf,
  stateChangeRequests,
  type StateChangeRequest,
} from "./kubevirt-state.ts";
import { backoffLeftMs, nextStartFailure, startFailureOf, withStartFailure } from "./start-failure.ts";
import { vmStatus, type Expectations } from "./vm-status.ts";
import { splitKey, WorkQueue } from "./work-queue.ts";

export const vmFinalizer = "kubevirt.io/virtualMachineControllerFinalize";

/**
 * VMI from the VM template (SetupVMIFromVM): template labels replace the VM's, owner reference to the VM.
 * KubeVirt's VMI webhook (vmi-mutator.ts) still applies its defaults when the VMI is created.
 */
export function vmiFromTemplate(vm: KubeObject): JsonObject {
  const template = field(vm, "spec", "template");
  const templateMetadata = isJsonObject(field(template, "metadata"))
    ? (clone(field(template, "metadata")) as JsonObject)
    : {};
  const spec = isJsonObject(field(template, "spec")) ? (clone(field(template, "spec")) as JsonObject) : {};
  const domain = isJsonObject(spec.domain) ? spec.domain : {};
  if (!isJsonObject(field(domain, "machine"))) domain.machine = { type: "q35" };
  spec.domain = domain;
  const { creationTimestamp: _created, ...metadata } = templateMetadata;
  return {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachineInstance",
    metadata: {
      ...metadata,
      name: vm.metadata.name,
      namespace: vm.metadata.namespace,
      annotations: {
        ...(isJsonObject(metadata.annotations) ? metadata.annotations : {}),
        "kubevirt.io/vm-generation": String(vm.metadata.generation ?? 1),
      },
      ownerReferences: [
        {
          apiVersion: "kubevirt.io/v1",
          kind: "VirtualMachine",
          name: vm.metadata.name,
          uid: vm.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec,
  };
}

export class VmController {
  private readonly queue = new WorkQueue("vm controller", (key) => this.reconcile(key));
  /** VMs (by uid) whose failed VMI is being deleted so that RerunOnFailure can start a new one. */
  private readonly rerunAfterFailure = new Set<string>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly registry: Registry,
    private readonly recorder: EventRecorder,
    /** How long one second of the start-failure backoff lasts. */
    private readonly backoffSecondMs = 1000,
  ) {
    this.unsubscribe = registry.store.subscribe((event) => {
      if (event.resource === virtualMachines || event.resource === virtualMachineInstances) {
        this.queue.add(`${event.object.metadata.namespace}/${event.object.metadata.name}`);
      }
      if (event.resource === virtualMachines && event.type === "DELETED") {
        this.rerunAfterFailure.delete(event.object.metadata.uid);
      }
    });
  }

  stop(): void {
    this.unsubscribe();
    this.queue.stop();
  }

  private reconcile(key: string): void {
    const { namespace, name } = splitKey(key);
    const store = this.registry.store;
    let vm = store.get(virtualMachines, namespace, name);
    if (!vm) return;
    const found = store.get(virtualMachineInstances, namespace, name);
    const vmi = found && isOwnedBy(found, vm) ? found : undefined;

    if (vm.metadata.deletionTimestamp) {
      if (vmi) this.stopVmi(vm, vmi);
      else {
        this.writeStatus(vm, undefined, { startExpected: false, stopExpected: true });
        this.registry.removeFinalizer(virtualMachines, vm, vmFinalizer);
        return;
      }
      this.writeStatus(vm, vmi, { startExpected: false, stopExpected: true });
      return;
    }
    if (!vm.metadata.finalizers?.includes(vmFinalizer)) {
      vm = this.registry.write(virtualMachines, {
        ...vm,
        metadata: { ...vm.metadata, finalizers: [...(vm.metadata.finalizers ?? []), vmFinalizer] },
      });
    }

    vm = this.recordStartFailure(vm, vmi);
    const expectations = this.sync(vm, vmi);
    const current = store.get(virtualMachines, namespace, name);
    if (current) this.writeStatus(current, store.get(virtualMachineInstances, namespace, name), expectations);
  }

  /** Acts on pending requests first, then on the run strategy; returns what the status should expect. */
  private sync(vm: KubeObject, vmi: KubeObject | undefined): Expectations {
    const requests = stateChangeRequests(vm);
    const [first] = requests;
    if (first?.action === "Stop") {
      if (vmi && (first.uid === undefined || first.uid === vmi.metadata.uid)) {
        this.stopVmi(vm, vmi);
        return { startExpected: false, stopExpected: true };
      }
      // The VMI the request was about is gone: the stop is done.
      this.dropFirstRequest(vm, requests);
      return this.sync(
        this.registry.get(virtualMachines, vm.metadata.namespace ?? "", vm.metadata.name),
        vmi,
      );
    }
    if (first?.action === "Start") {
      if (vmi && isFinal(vmi)) {
        this.stopVmi(vm, vmi);
        return { startExpected: true, stopExpected: false };
      }
      if (!vmi) this.startVmi(vm);
      this.dropFirstRequest(vm, requests);
      return { startExpected: true, stopExpected: false };
    }

    const strategy = runStrategyOf(vm);
    const lastStrategy = (vm.status as { runStrategy?: string } | undefined)?.runStrategy;
    // Once and RerunOnFailure start a VMI when the VM first gets that strategy, and only then.
    const firstRun = lastStrategy !== strategy;
    switch (strategy) {
      case "Always":
        if (!vmi) return this.startUnlessBackingOff(vm);
        // A crashed, killed or powered-off guest: the VMI goes, and a new one comes up after it.
        if (isFinal(vmi)) this.stopVmi(vm, vmi);
        return { startExpected: true, stopExpected: false };
      case "Halted":
        if (vmi) this.stopVmi(vm, vmi);
        return { startExpected: false, stopExpected: true };
      case "RerunOnFailure": {
        if (vmi && phaseOf(vmi) === "Failed") {
          this.rerunAfterFailure.add(vm.metadata.uid);
          this.stopVmi(vm, vmi);
          return { startExpected: true, stopExpected: false };
        }
        const rerun = this.rerunAfterFailure.has(vm.metadata.uid);
        if (vmi || !(firstRun || rerun)) return { startExpected: false, stopExpected: false };
        const started = this.startUnlessBackingOff(vm);
        if (started.startExpected) this.rerunAfterFailure.delete(vm.metadata.uid);
        return started;
      }
      case "Once":
        if (!vmi && firstRun) this.startVmi(vm);
        return { startExpected: !vmi && firstRun, stopExpected: false };
      default:
        return { startExpected: false, stopExpected: false };
    }
  }

  /** A VM whose last starts failed waits out its backoff, then starts; the queue brings it back. */
  private startUnlessBackingOff(vm: KubeObject): Expectations {
    const wait = backoffLeftMs(vm, Date.now());
    if (wait > 0) {
      this.queue.addAfter(`${vm.metadata.namespace}/${vm.metadata.name}`, wait);
      return { startExpected: false, stopExpected: false };
    }
    this.startVmi(vm);
    return { startExpected: true, stopExpected: false };
  }

  private recordStartFailure(vm: KubeObject, vmi: KubeObject | undefined): KubeObject {
    const next = nextStartFailure(vm, vmi, Date.now(), this.backoffSecondMs);
    if (JSON.stringify(next) === JSON.stringify(startFailureOf(vm))) return vm;
    const status = withStartFailure({ ...(vm.status as JsonObject | undefined) }, next);
    return this.registry.write(virtualMachines, { ...vm, status });
  }

  private startVmi(vm: KubeObject): void {
    try {
      // virt-controller creates it through the API, so KubeVirt's webhook sees it like any other.
      const vmi = this.registry.create(virtualMachineInstances, mutateNewVmi(vmiFromTemplate(vm)));
      this.recorder.record(
        vm,
        "Normal",
        "SuccessfulCreate",
        `Started the virtual machine by creating the new virtual machine instance ${vmi.metadata.name}`,
        "virtualmachine-controller",
      );
    } catch (error) {
      // The previous VMI of the same name is still being torn down; its deletion requeues the VM.
      if (!(error instanceof ApiError && error.code === 409)) throw error;
    }
  }

  private stopVmi(vm: KubeObject, vmi: KubeObject): void {
    if (vmi.metadata.deletionTimestamp) return;
    this.registry.delete(virtualMachineInstances, vmi.metadata.namespace ?? "", vmi.metadata.name);
    this.recorder.record(
      vm,
      "Normal",
      "SuccessfulDelete",
      `Stopped the virtual machine by deleting the virtual machine instance ${vmi.metadata.uid}`,
      "virtualmachine-controller",
    );
  }

  private dropFirstRequest(vm: KubeObject, requests: StateChangeRequest[]): void {
    const rest = requests.slice(1);
    const status = { ...(vm.status as JsonObject | undefined) };
    if (rest.length > 0) status.stateChangeRequests = rest;
    else delete status.stateChangeRequests;
    this.registry.write(virtualMachines, { ...vm, status });
  }

  private writeStatus(vm: KubeObject, vmi: KubeObject | undefined, expectations: Expectations): void {
    const owned = vmi && isOwnedBy(vmi, vm) ? vmi : undefined;
    this.registry.write(virtualMachines, { ...vm, status: vmStatus(vm, owned, expectations) });
  }
}
