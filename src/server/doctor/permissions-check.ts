// The doctor's check of the console's own credentials: every permission it needs is granted, and none
// that would let a compromised console reach further (permissions.ts lists both and says why).
import { say, type DoctorText, type DoctorTextKey } from "../../common/doctor-texts.ts";
import { describePermission, type ForbiddenPermission, type Permission } from "./permissions.ts";
import { result, type Check } from "./check-verdict.ts";

export const permissionsCheck: Check = ({ required, forbidden, vmNamespace, leaseNamespace }) => {
  const title = say("permissionsTitle");
  if (!required.ok || !forbidden.ok) {
    const error = !required.ok ? required.error : !forbidden.ok ? forbidden.error : "";
    return result(
      "permissions",
      title,
      "fail",
      say("accessReviewsRefused", { error }),
      [],
      [say("accessReviewsFix")],
    );
  }
  const missing = required.value.filter((entry) => !entry.allowed);
  const dangerous = forbidden.value.filter((entry) => entry.allowed && entry.permission.severity === "fail");
  const tooMuch = forbidden.value.filter((entry) => entry.allowed && entry.permission.severity === "warn");
  const line = (key: DoctorTextKey, permission: Permission | ForbiddenPermission) =>
    say(key, {
      permission: describePermission(permission),
      scope: scopeOf(permission, { vmNamespace, leaseNamespace }),
      why: permission.why,
    });
  const details = [
    ...missing.map(({ permission }) => line("permissionMissing", permission)),
    ...dangerous.map(({ permission }) => line("permissionDangerous", permission)),
    ...tooMuch.map(({ permission }) => line("permissionNotNeeded", permission)),
  ];
  const adminHint = say("runAsConsoleHint");
  if (dangerous.length > 0) {
    return result(
      "permissions",
      title,
      "fail",
      say("permissionsDangerous", {
        what: whatTheyMay(
          dangerous.map((entry) => entry.permission),
          vmNamespace,
        ),
      }),
      details,
      [say("permissionsDangerousFix"), adminHint],
    );
  }
  if (missing.length > 0) {
    return result(
      "permissions",
      title,
      "fail",
      say("permissionsMissing", { missing: missing.length }),
      details,
      [say("permissionsMissingFix")],
    );
  }
  if (tooMuch.length > 0) {
    return result("permissions", title, "warn", say("permissionsTooMuch"), details, [adminHint]);
  }
  return result(
    "permissions",
    title,
    "ok",
    say("permissionsOk", { checks: required.value.length, namespace: vmNamespace }),
  );
};

/** "create pods, exec into pods in lab-sessions and reach the kubelets' API (nodes/proxy) cluster-wide". */
function whatTheyMay(permissions: ForbiddenPermission[], vmNamespace: string): DoctorText {
  const whats = (scope: ForbiddenPermission["scope"]) => [
    ...new Set(permissions.filter((permission) => permission.scope === scope).map(({ what }) => what)),
  ];
  const inNamespace = whats("vm-namespace");
  const clusterWide = whats("cluster");
  const here = say("dangerousInNamespace", { what: inNamespace.join(", "), namespace: vmNamespace });
  const everywhere = say("dangerousClusterWide", { what: clusterWide.join(", ") });
  if (inNamespace.length > 0 && clusterWide.length > 0)
    return say("dangerousBoth", { inNamespace: here, clusterWide: everywhere });
  return inNamespace.length > 0 ? here : everywhere;
}

/** Where a permission applies, said after it: " in lab-sessions", " cluster-wide". */
function scopeOf(
  permission: Permission | ForbiddenPermission,
  namespaces: { vmNamespace: string; leaseNamespace?: string },
): DoctorText {
  if (permission.scope === "cluster") return say("scopeClusterWide");
  return say("scopeIn", {
    namespace:
      (permission.scope === "lease-namespace" ? namespaces.leaseNamespace : namespaces.vmNamespace) ?? "",
  });
}
