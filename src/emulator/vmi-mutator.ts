// virt-api's mutating webhook for new VirtualMachineInstances (pkg/virt-api/webhooks/mutating-webhook/
// mutators/vmi-mutator.go): every VMI, whoever creates it, enters the store with KubeVirt's foreground
// finalizer and phase Pending, so no reader ever sees a VMI without a phase.
import { timestamp, type JsonObject, type ObjectMeta } from "./objects.ts";

export const vmiFinalizer = "kubevirt.io/foregroundDeleteVirtualMachine";

/** The VMI as the webhook lets it in: any status the creator sent is replaced. */
export function mutateNewVmi(object: JsonObject): JsonObject {
  const metadata = (object.metadata ?? {}) as Partial<ObjectMeta>;
  return {
    ...object,
    metadata: { ...metadata, finalizers: [...(metadata.finalizers ?? []), vmiFinalizer] },
    status: {
      phase: "Pending",
      phaseTransitionTimestamps: [{ phase: "Pending", phaseTransitionTimestamp: timestamp() }],
    },
  };
}
