// The doctor's check of the namespace the VMs run in: it must exist and let privileged pods in, as
// KubeVirt's launcher pods are; a stricter Pod Security level refuses every launch.
import { say, verbatim } from "../../common/doctor-texts.ts";
import { result, type Check } from "./check-verdict.ts";

const enforceLabel = "pod-security.kubernetes.io/enforce";

export const vmNamespaceCheck: Check = ({ namespace, vmNamespace }) => {
  const title = say("vmNamespaceTitle");
  const labelFix = `kubectl label namespace ${vmNamespace} ${enforceLabel}=privileged --overwrite`;
  if (!namespace.ok) {
    return result(
      "vm-namespace",
      title,
      "fail",
      say("namespaceUnreadable", { namespace: vmNamespace, error: namespace.error }),
    );
  }
  if (!namespace.value) {
    return result(
      "vm-namespace",
      title,
      "fail",
      say("namespaceMissing", { namespace: vmNamespace }),
      [],
      [say("namespaceCreateFix", { namespace: vmNamespace, labelFix })],
    );
  }
  const level = namespace.value.metadata.labels?.[enforceLabel];
  const why = say("namespaceWhyPrivileged");
  if (level === "privileged") {
    return result("vm-namespace", title, "ok", say("namespacePrivileged", { namespace: vmNamespace }), [why]);
  }
  if (level === undefined) {
    return result(
      "vm-namespace",
      title,
      "warn",
      say("namespaceNoLabel", { namespace: vmNamespace, label: enforceLabel }),
      [why, say("namespaceDefaultRisk")],
      [verbatim(labelFix)],
    );
  }
  return result(
    "vm-namespace",
    title,
    "fail",
    say("namespaceRefused", { namespace: vmNamespace, level }),
    [why],
    [verbatim(labelFix)],
  );
};
