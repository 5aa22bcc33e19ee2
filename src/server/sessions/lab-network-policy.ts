// The NetworkPolicy that opens a lab's declared egress (network.egress in its file) for that lab's VMs.
// deploy/base closes every VM's egress but DNS; policies add up, so this one only allows more, and
// only for pods carrying the lab's label, which the BFF sets on the VM template (vm-manifest.ts) and
// KubeVirt copies to the virt-launcher pod. One policy per lab, not per session: it is the same for
// every session of the lab, and a class launching at once then costs no write per launch.
import { isDeepStrictEqual } from "node:util";
import type { FastifyBaseLogger } from "fastify";
import type { Lab } from "../../common/lab.ts";
import { DomainError } from "../errors/domain-error.ts";
import type { ClusterClient } from "../kube/client.ts";
import { KubeStatusError } from "../kube/errors.ts";
import type { NetworkPolicy } from "../kube/types.ts";
import { labelKeys, managedByValue } from "./labels.ts";

const namePrefix = "lab-egress-";

/** Lab ids are at most 40 characters, so the name is a valid object name. */
export function labNetworkPolicyName(labId: string): string {
  return `${namePrefix}${labId}`;
}

/** Whether a policy is one of these (and so the console's to update or delete), by name and labels. */
export function isLabNetworkPolicy(policy: NetworkPolicy): boolean {
  const labels = policy.metadata.labels ?? {};
  const labId = labels[labelKeys.lab];
  return (
    labels[labelKeys.managedBy] === managedByValue &&
    labId !== undefined &&
    policy.metadata.name === labNetworkPolicyName(labId)
  );
}

/** Selects the console's lab policies when listing: never deploy/'s own, which carry no lab label. */
export const labNetworkPoliciesSelector = `${labelKeys.managedBy}=${managedByValue},${labelKeys.lab}`;

/** The lab's policy, or undefined for a lab that declares no egress (its VMs get DNS alone). */
export function buildLabNetworkPolicy(lab: Lab, namespace: string): NetworkPolicy | undefined {
  const egress = lab.network?.egress ?? [];
  if (egress.length === 0) return undefined;
  const labLabels = { [labelKeys.managedBy]: managedByValue, [labelKeys.lab]: lab.id };
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: labNetworkPolicyName(lab.id), namespace, labels: labLabels },
    spec: {
      // KubeVirt's own label too: only launcher pods, never another kind of pod that copied the labels.
      podSelector: { matchLabels: { "kubevirt.io": "virt-launcher", ...labLabels } },
      // Egress only: the VMs' ingress stays as deploy/base's lab-console-vms has it.
      policyTypes: ["Egress"],
      egress: egress.map((rule) => ({
        to: [{ ipBlock: { cidr: rule.cidr, ...(rule.except.length > 0 && { except: rule.except }) } }],
        ports: rule.ports.map((port) => ({ protocol: rule.protocol, port })),
      })),
    },
  };
}

export interface LabNetworkPoliciesDeps {
  cluster: Pick<
    ClusterClient,
    | "namespace"
    | "listNetworkPolicies"
    | "createNetworkPolicy"
    | "replaceNetworkPolicySpec"
    | "deleteNetworkPolicy"
  >;
  labs: Lab[];
  log: Pick<FastifyBaseLogger, "info" | "warn">;
}

/**
 * Keeps the lab policies in the VM namespace as the lab files say. Lab files are read once at
 * start-up, so once per process is enough: before the first launch, the policies of labs that no
 * longer declare egress (or are gone) are deleted; before a lab's first launch, its policy is
 * created or its spec replaced. Both are retried at the next launch when they fail. A policy deleted
 * by hand while the BFF runs comes back when it restarts.
 */
export class LabNetworkPolicies {
  private swept: Promise<Map<string, NetworkPolicy>> | undefined;
  private readonly ensured = new Map<string, Promise<void>>();

  constructor(private readonly deps: LabNetworkPoliciesDeps) {}

  /**
   * Before a session of `lab` starts. For a lab with egress this fails when its policy cannot be
   * written: the VM would boot without the access its lab needs. For a lab without, a failed sweep
   * is only logged: it must not stop labs that need nothing from the network.
   */
  async prepare(lab: Lab): Promise<void> {
    const desired = buildLabNetworkPolicy(lab, this.deps.cluster.namespace);
    if (!desired) {
      try {
        await this.sweep();
      } catch (error) {
        this.deps.log.warn(
          { err: error },
          "could not check for NetworkPolicies of labs that no longer declare egress; trying again at the next launch",
        );
      }
      return;
    }
    let pending = this.ensured.get(lab.id);
    if (!pending) {
      pending = this.ensure(lab, desired);
      this.ensured.set(lab.id, pending);
      pending.catch(() => this.ensured.delete(lab.id));
    }
    await pending;
  }

  private sweep(): Promise<Map<string, NetworkPolicy>> {
    if (!this.swept) {
      const running = this.removeStale();
      this.swept = running;
      running.catch(() => {
        if (this.swept === running) this.swept = undefined;
      });
    }
    return this.swept;
  }

  /** Deletes the policies no lab declares; returns the rest by name. */
  private async removeStale(): Promise<Map<string, NetworkPolicy>> {
    const { cluster, labs, log } = this.deps;
    const wanted = new Set(
      labs.filter((lab) => (lab.network?.egress.length ?? 0) > 0).map((lab) => labNetworkPolicyName(lab.id)),
    );
    const listed = (await cluster.listNetworkPolicies(labNetworkPoliciesSelector)).filter(isLabNetworkPolicy);
    const kept = new Map<string, NetworkPolicy>();
    for (const policy of listed) {
      const name = policy.metadata.name ?? "";
      if (wanted.has(name)) {
        kept.set(name, policy);
        continue;
      }
      await cluster.deleteNetworkPolicy(name);
      log.info(
        { networkPolicy: name },
        `removed the egress of lab ${policy.metadata.labels?.[labelKeys.lab] ?? "?"}: no lab file declares it any more`,
      );
    }
    return kept;
  }

  private async ensure(lab: Lab, desired: NetworkPolicy): Promise<void> {
    const { cluster, log } = this.deps;
    const name = desired.metadata.name ?? "";
    try {
      const existing = (await this.sweep()).get(name);
      if (existing && isDeepStrictEqual(existing.spec, desired.spec)) return;
      if (!existing) {
        try {
          await cluster.createNetworkPolicy(desired);
          log.info({ networkPolicy: name }, `opened the egress lab ${lab.id} declares`);
          return;
        } catch (error) {
          // Another replica created it since the list: make it ours below.
          if (!(error instanceof KubeStatusError && error.statusCode === 409)) throw error;
        }
      }
      await cluster.replaceNetworkPolicySpec(name, desired.spec);
      log.info({ networkPolicy: name }, `updated the egress of lab ${lab.id} to its lab file`);
    } catch (error) {
      if (error instanceof KubeStatusError && (error.statusCode === 400 || error.statusCode === 422)) {
        throw new DomainError(
          "rejected",
          "network_policy_rejected",
          `The cluster rejected the network policy of lab ${lab.id}: ${error.message}`,
          { lab: lab.id, detail: error.message },
        );
      }
      throw error;
    }
  }
}
