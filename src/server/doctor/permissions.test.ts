// The permissions the console asks for, and why.
import { describe, expect, it } from "vitest";
import { requiredPermissions } from "./permissions.ts";

describe("the required permissions", () => {
  it("requires delete on Secrets, for a warm claim and for admission", () => {
    const deleteSecrets = requiredPermissions.find(
      (permission) =>
        "resource" in permission && permission.resource === "secrets" && permission.verb === "delete",
    );
    expect(deleteSecrets).toMatchObject({ scope: "vm-namespace" });
    expect(deleteSecrets?.why).toBe(
      "a warm VM's claim replaces its cloud-init with the session's, and OwnerReferencesPermissionEnforcement (on in OpenShift and CIS-hardened clusters) needs delete on a Secret to create it with an ownerReference",
    );
  });
});
