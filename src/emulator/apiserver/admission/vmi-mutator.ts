// virt-api's mutating webhook for new VirtualMachineInstances (pkg/virt-api/webhooks/mutating-webhook/
// mutators/vmi-mutator.go, with SetDefaultVirtualMachineInstance from pkg/defaults/defaults.go): every
// VMI, whoever creates it, enters the store with its guest memory defaulted, KubeVirt's foreground
// finalizer and phase Pending, so no reader ever sees a VMI without a phase.
import { parseQuantity } from "../../../common/quantity.ts";
import { field, isJsonObject, timestamp, type JsonObject, type ObjectMeta } from "../../cluster/objects.ts";

export const vmiFinalizer = "kubevirt.io/foregroundDeleteVirtualMachine";

function nonZero(quantity: unknown): boolean {
  return (parseQuantity(quantity) ?? 0) !== 0;
}

/**
 * setGuestMemory: memory.guest from the memory request, else the limit, else the hugepage size. Never
 * the other way round: a guest-only VMI keeps no memory request, so virt-controller sizes its pod from
 * the guest and counts no page tables (4372Mi, not 4380Mi, for 2 vCPU / 4Gi).
 */
function withGuestMemory(spec: unknown): unknown {
  if (!isJsonObject(spec) || !isJsonObject(spec.domain)) return spec;
  const domain = spec.domain;
  const memory = isJsonObject(domain.memory) ? domain.memory : {};
  if (memory.guest !== undefined) return spec;
  const guest = [
    field(domain, "resources", "requests", "memory"),
    field(domain, "resources", "limits", "memory"),
  ].find(nonZero);
  const hugepageSize = field(memory, "hugepages", "pageSize");
  const chosen = guest ?? (parseQuantity(hugepageSize) === undefined ? undefined : hugepageSize);
  return chosen === undefined
    ? spec
    : { ...spec, domain: { ...domain, memory: { ...memory, guest: chosen } } };
}

/** The VMI as the webhook lets it in: any status the creator sent is replaced. */
export function mutateNewVmi(object: JsonObject): JsonObject {
  const metadata = (object.metadata ?? {}) as Partial<ObjectMeta>;
  const spec = withGuestMemory(object.spec);
  const guest = field(spec, "domain", "memory", "guest");
  return {
    ...object,
    metadata: { ...metadata, finalizers: [...(metadata.finalizers ?? []), vmiFinalizer] },
    spec,
    status: {
      phase: "Pending",
      phaseTransitionTimestamps: [{ phase: "Pending", phaseTransitionTimestamp: timestamp() }],
      // setGuestMemoryStatus; virt-controller adds memoryOverhead once the pod exists.
      ...(guest === undefined
        ? {}
        : { memory: { guestAtBoot: guest, guestCurrent: guest, guestRequested: guest } }),
    },
  };
}
