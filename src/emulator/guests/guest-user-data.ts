// The cloud-init user data a VMI boots with, read the way virt-launcher reads it: from the first
// cloudInitNoCloud (or cloudInitConfigDrive) volume, inline (userData), base64 (userDataBase64) or
// from a Secret in the VMI's namespace (secretRef; key userdata, else userData).
import type { Registry } from "../apiserver/registry.ts";
import { field, isJsonObject, stringField, type KubeObject } from "../cluster/objects.ts";
import { secrets } from "../cluster/resources.ts";

const sources = ["cloudInitNoCloud", "cloudInitConfigDrive"];
const secretKeys = ["userdata", "userData"];

/** The user data, or undefined when the VMI has none; throws when its Secret cannot give it. */
export function userDataOf(registry: Registry, vmi: KubeObject): string | undefined {
  const volumes = field(vmi, "spec", "volumes");
  if (!Array.isArray(volumes)) return undefined;
  for (const volume of volumes) {
    for (const source of sources) {
      const cloudInit = field(volume, source);
      if (!isJsonObject(cloudInit)) continue;
      const volumeName = stringField(volume, "name") ?? source;
      if (typeof cloudInit.userData === "string") return cloudInit.userData;
      if (typeof cloudInit.userDataBase64 === "string") {
        return Buffer.from(cloudInit.userDataBase64, "base64").toString("utf8");
      }
      const secretName = stringField(cloudInit, "secretRef", "name");
      if (secretName) return fromSecret(registry, vmi.metadata.namespace ?? "", secretName, volumeName);
      return undefined;
    }
  }
  return undefined;
}

function fromSecret(registry: Registry, namespace: string, name: string, volumeName: string): string {
  const secret = registry.find(secrets, namespace, name);
  if (!secret) throw new Error(`volume ${volumeName}: secret "${name}" not found`);
  for (const key of secretKeys) {
    const value = stringField(secret, "data", key);
    if (value !== undefined) return Buffer.from(value, "base64").toString("utf8");
  }
  throw new Error(`volume ${volumeName}: secret "${name}" has no key "userdata" or "userData"`);
}
