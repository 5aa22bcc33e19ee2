// Which VMI a subresource call addresses, with virt-api's errors (FetchVirtualMachineInstance and
// FetchVirtualMachineInstanceForVM in pkg/virt-api/rest/subresource.go). KubeVirt names the resource
// in the singular in these messages: `virtualmachineinstance.kubevirt.io "x" not found`.
import type { Registry } from "../apiserver/registry.ts";
import { field, type KubeObject } from "../cluster/objects.ts";
import { kubevirtGroup, virtualMachineInstances, virtualMachines } from "../cluster/resources.ts";
import type { ResourceRequestInfo } from "../http/request-info.ts";
import { ApiError, conflict, notFound } from "../http/status.ts";

export const vmiResource = { group: kubevirtGroup, plural: "virtualmachineinstance" };
const vmResource = { group: kubevirtGroup, plural: "virtualmachine" };

export function vmiConflict(name: string, why: string): ApiError {
  return conflict(vmiResource, name, why);
}

/** errors.NewInternalError: the message prefixed, the error repeated as the only cause. */
export function kubevirtInternalError(message: string): ApiError {
  return new ApiError(500, "InternalError", `Internal error occurred: ${message}`, {
    causes: [{ message }],
  });
}

/** The VMI of a `virtualmachineinstances/NAME/...` or `virtualmachines/NAME/...` call. */
export function targetVmi(registry: Registry, info: ResourceRequestInfo): KubeObject {
  const { namespace, name } = info;
  if (info.resource === virtualMachines.plural) {
    const vm = registry.find(virtualMachines, namespace, name);
    if (!vm) throw notFound(vmResource, name);
    if (field(vm, "status", "created") !== true) throw conflict(vmResource, name, "VMI is not started");
    const vmi = registry.find(virtualMachineInstances, namespace, name);
    if (!vmi) throw notFound(vmiResource, name);
    if (!(vmi.metadata.ownerReferences ?? []).some((owner) => owner.uid === vm.metadata.uid)) {
      throw kubevirtInternalError(`unable to retrieve vmi [${name}] for vm: <nil>`);
    }
    return vmi;
  }
  const vmi = registry.find(virtualMachineInstances, namespace, name);
  if (!vmi) throw notFound(vmiResource, name);
  return vmi;
}
