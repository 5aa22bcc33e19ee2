// The doctor's checks that the cluster can run lab VMs at all: it answers, KubeVirt is deployed, and
// some nodes offer KVM. Each failure here stops every launch, whatever else is right.
import { say } from "../../common/doctor-texts.ts";
import type { Node } from "../kube/cluster-facts.ts";
import { kvmDevice } from "../capacity/node-room.ts";
import { parseQuantity } from "../../common/quantity.ts";
import { result, type Check } from "./check-verdict.ts";

export const clusterCheck: Check = ({ kubernetesVersion }) => {
  const title = say("clusterTitle");
  if (!kubernetesVersion.ok) {
    return result(
      "cluster",
      title,
      "fail",
      say("clusterNoAnswer", { error: kubernetesVersion.error }),
      [say("clusterNoAnswerWhy")],
      [say("clusterFix")],
    );
  }
  return result("cluster", title, "ok", say("clusterOk", { version: kubernetesVersion.value }));
};

export const kubeVirtCheck: Check = ({ kubeVirt }) => {
  const title = say("kubeVirtTitle");
  if (!kubeVirt.ok)
    return result("kubevirt", title, "fail", say("kubeVirtUnreadable", { error: kubeVirt.error }));
  const cr = kubeVirt.value;
  if (!cr) {
    return result("kubevirt", title, "fail", say("kubeVirtMissing"), [], [say("kubeVirtInstallFix")]);
  }
  const version = cr.status?.observedKubeVirtVersion ?? say("unknownVersion");
  const where = `${cr.metadata.namespace ?? ""}/${cr.metadata.name ?? ""}`;
  if (cr.status?.phase !== "Deployed") {
    return result(
      "kubevirt",
      title,
      "warn",
      say("kubeVirtNotReady", { version, phase: cr.status?.phase ?? say("unknown") }),
      [say("kubeVirtResource", { where })],
      [say("kubeVirtNotReadyFix", { namespace: cr.metadata.namespace ?? "kubevirt" })],
    );
  }
  return result("kubevirt", title, "ok", say("kubeVirtDeployed", { version }), [
    say("kubeVirtResource", { where }),
  ]);
};

export const kvmCheck: Check = ({ nodes }) => {
  const title = say("kvmTitle");
  if (!nodes.ok) return result("kvm", title, "fail", say("nodesUnreadable", { error: nodes.error }));
  const withKvm = nodes.value.filter(
    (node) => (parseQuantity(node.status?.allocatable?.[kvmDevice]) ?? 0) > 0,
  );
  const names = (list: Node[]) => list.map((node) => node.metadata.name).join(", ");
  if (withKvm.length === 0) {
    return result(
      "kvm",
      title,
      "fail",
      say("kvmNone", { device: kvmDevice }),
      [say("kvmNodes", { nodes: nodes.value.length, names: names(nodes.value) || say("none") })],
      [say("kvmFix")],
    );
  }
  const without = nodes.value.filter((node) => !withKvm.includes(node));
  return result(
    "kvm",
    title,
    "ok",
    say("kvmSome", { withKvm: withKvm.length, nodes: nodes.value.length, device: kvmDevice }),
    [
      say("kvmWith", { names: names(withKvm) }),
      ...(without.length > 0 ? [say("kvmWithout", { names: names(without) })] : []),
    ],
  );
};
