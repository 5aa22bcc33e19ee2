// Creating a session's two cluster objects, for a launch and for a warm pool alike.
import type { ClusterClient } from "../kube/client.ts";
import type { Secret, VirtualMachine } from "../kube/types.ts";
import { ownedByVm } from "./vm-manifest.ts";

/** The VM, then its user data owned by it; a VM whose user data could not be stored is removed. */
export async function createSessionVm(
  cluster: Pick<ClusterClient, "createVirtualMachine" | "createSecret" | "deleteVirtualMachine">,
  objects: { virtualMachine: VirtualMachine; userDataSecret: Secret },
): Promise<VirtualMachine> {
  const created = await cluster.createVirtualMachine(objects.virtualMachine);
  try {
    await cluster.createSecret(ownedByVm(objects.userDataSecret, created));
  } catch (error) {
    // Without its user data the VM could never boot: remove it rather than leave a broken session.
    await cluster.deleteVirtualMachine(objects.virtualMachine.metadata.name ?? "").catch(() => undefined);
    throw error;
  }
  return created;
}
