// The Secrets a VMI's volumes read. The kubelet mounts them before the launcher pod's containers
// start, so a missing one holds the pod back with a FailedMount event that names the volume.
import { field, stringField, type KubeObject } from "../cluster/objects.ts";

/** Names of the Secrets a VMI's volumes read, which the kubelet must mount before the pod runs. */
export function referencedSecrets(vmi: KubeObject): string[] {
  const volumes = field(vmi, "spec", "volumes");
  if (!Array.isArray(volumes)) return [];
  const names = new Set<string>();
  for (const volume of volumes) {
    for (const source of ["cloudInitNoCloud", "cloudInitConfigDrive"]) {
      for (const ref of ["secretRef", "networkDataSecretRef"]) {
        const name = stringField(volume, source, ref, "name");
        if (name) names.add(name);
      }
    }
    const secretName = stringField(volume, "secret", "secretName");
    if (secretName) names.add(secretName);
  }
  return [...names];
}

/** The volume that reads a Secret, as the kubelet's FailedMount event names it. */
export function volumeNameFor(vmi: KubeObject, secretName: string): string {
  const volumes = field(vmi, "spec", "volumes");
  const match = Array.isArray(volumes)
    ? volumes.find((volume) => JSON.stringify(volume).includes(`"${secretName}"`))
    : undefined;
  return stringField(match, "name") ?? secretName;
}
