// The doctor's sentences, by key, in English with {{params}}: the BFF renders the English a check
// carries for `npm run doctor` and API clients, and names each sentence by its key and params beside
// it, so the SPA says it in the reader's language from its catalogs (doctor.texts.*), as error reasons
// are said (error-reasons.ts). en.json holds these same words; a test compares them. Commands, names
// and what the cluster answered are params, never translated.
import * as z from "zod/mini";

export const doctorTexts = {
  verbatim: "{{text}}",
  on: "on",
  off: "off",
  unknown: "unknown",
  unknownVersion: "an unknown version",
  none: "none",

  clusterTitle: "The cluster answers",
  clusterNoAnswer: "The Kubernetes API does not answer: {{error}}",
  clusterNoAnswerWhy: "Without the API nothing else can be checked, and no session can start.",
  clusterFix:
    "Check the cluster the console is pointed at (LAB_KUBECONFIG or KUBECONFIG; in a pod, its service account) with `kubectl version`, and that the network lets the console reach the API server.",
  clusterOk: "Kubernetes {{version}} answers.",

  kubeVirtTitle: "KubeVirt is installed",
  kubeVirtUnreadable: "The KubeVirt custom resource could not be read: {{error}}",
  kubeVirtMissing: "KubeVirt is not installed: the cluster has no KubeVirt custom resource.",
  kubeVirtInstallFix:
    "Install KubeVirt (the operator, then a KubeVirt resource): https://kubevirt.io/user-guide/cluster_admin/installation/",
  kubeVirtNotReady: "KubeVirt {{version}} is installed but not ready (phase {{phase}}).",
  kubeVirtResource: "KubeVirt resource: {{where}}",
  kubeVirtNotReadyFix: "Look at `kubectl -n {{namespace}} get kubevirt,pods` until the phase is Deployed.",
  kubeVirtDeployed: "KubeVirt {{version}} is deployed.",

  imageVolumeTitle: "ImageVolume: KubeVirt, Kubernetes and the container runtime agree",
  imageVolumeVersionsUnknown:
    "Not checked: the KubeVirt and Kubernetes versions are not both known (see the checks above).",
  imageVolumeKubeVirtGate: "KubeVirt {{version}}: ImageVolume is {{state}} because {{because}}.",
  imageVolumeKubernetesGate: "Kubernetes {{version}}: ImageVolume is {{state}} because {{because}}.",
  imageVolumeNotUsed:
    "KubeVirt does not use image volumes: container disks are copied in by helper containers, which works everywhere.",
  imageVolumeMetricsUnreadable: "The API server's /metrics could not be read: {{error}}",
  imageVolumeDropped:
    "With KubeVirt's gate on, virt-controller mounts every containerDisk as a pod image volume. With Kubernetes' gate off, the API server silently drops those volumes and their mounts from the launcher pod: the pod is accepted without any warning, and then fails with `{{failure}}`. No VM starts.",
  imageVolumeProbablyOff:
    "KubeVirt mounts container disks as image volumes, and Kubernetes' ImageVolume gate is probably off.",
  imageVolumeJudgedFromVersion:
    "The API server's gate could not be read, so this is judged from its version.",
  imageVolumeProbablyOffFix:
    "{{disable}}\nOr let the console read /metrics (see deploy/base) so the doctor can tell for sure.",
  imageVolumeOff:
    "KubeVirt mounts container disks as image volumes, but Kubernetes' ImageVolume gate is off: no VM will start.",
  imageVolumeOffFix:
    "{{disable}}\nOr turn on Kubernetes' ImageVolume feature gate (API server and kubelets) on nodes whose runtime supports it (containerd 2.1+ or CRI-O 1.31+).",
  apiServerGateOn: "The API server's ImageVolume gate is on",
  apiServerGateProbablyOn: "The API server's ImageVolume gate should be on (judged from its version)",
  kubeletsNotVisible:
    "The kubelets' ImageVolume gate and the container runtimes' configuration cannot be checked from here: reading a kubelet needs nodes/proxy, which is root on every node. If launcher pods fail to mount their container disks, check the kubelets' --feature-gates (or featureGates in their configuration file).",
  imageVolumeNodesUnreadable: "{{gate}}; the nodes' container runtimes could not be read.",
  imageVolumeRuntimesTooOld:
    "{{gate}}, but {{nodes}} node(s) run a container runtime too old for image volumes: VMs placed there will not start.",
  imageVolumeTooOldList:
    "Too old: {{runtimes}}. Image volumes need containerd 2.1 or newer (or CRI-O 1.31+).",
  imageVolumeUpgradeFix: "Upgrade containerd on those nodes, or: {{disable}}",
  imageVolumeRuntimesUnknown:
    "{{gate}}; some nodes' container runtimes are not known to support image volumes.",
  imageVolumeUnknownList: "Unknown: {{runtimes}}. Image volumes need containerd 2.1+ or CRI-O 1.31+.",
  imageVolumeOk:
    "{{gate}} and every node's container runtime is recent enough for image volumes; the kubelets' gate cannot be checked from here.",
  disableRemoveExplicit:
    "Remove ImageVolume from spec.configuration.developerConfiguration.featureGates: `kubectl -n {{namespace}} edit kubevirt {{name}}`.",
  disableAddToDisabledList:
    "Turn KubeVirt's gate off (back to copying container disks): add ImageVolume to spec.configuration.developerConfiguration.disabledFeatureGates, for example\n  {{command}}\n(that replaces the list: keep any gates already in it). Check it again after every KubeVirt upgrade.",
  becauseKubeVirtTooOld: "KubeVirt before 1.6 has no ImageVolume gate",
  becauseInFeatureGates: "it is listed in spec.configuration.developerConfiguration.featureGates",
  becauseInDisabledFeatureGates:
    "it is listed in spec.configuration.developerConfiguration.disabledFeatureGates",
  becauseBetaOnByDefault: "Beta gates are on by default from KubeVirt 1.9 and it is not disabled",
  becauseOffByDefault:
    "it is {{stage}} and off by default in KubeVirt {{version}} unless listed in featureGates",
  becauseMetrics: "the API server reports {{metric}} {{value}}",
  becauseKubernetesTooOld: "Kubernetes before 1.31 has no ImageVolume feature",
  becauseKubernetesOnByDefault: "it is on by default from Kubernetes 1.35 (assumed from the version)",
  becauseKubernetesOffByDefault: "it is off by default in Kubernetes {{version}} (assumed from the version)",

  kvmTitle: "Nodes with KVM",
  nodesUnreadable: "The nodes could not be read: {{error}}",
  kvmNone: "No node exposes {{device}}: VMs can be created but never scheduled.",
  kvmNodes: "{{nodes}} node(s): {{names}}.",
  kvmFix:
    "Enable hardware virtualization (VT-x/AMD-V) on the nodes, or nested virtualization on cloud VMs; check that virt-handler runs on them (`kubectl -n kubevirt get pods -o wide`) and that `kubectl get nodes -o jsonpath='{..allocatable}'` lists devices.kubevirt.io/kvm.",
  kvmSome: "{{withKvm}} of {{nodes}} node(s) expose {{device}}.",
  kvmWith: "With KVM: {{names}}.",
  kvmWithout: "Without: {{names}} (VMs do not go there).",

  vmNamespaceTitle: "The VM namespace admits virt-launcher pods",
  namespaceUnreadable: "The namespace {{namespace}} could not be read: {{error}}",
  namespaceMissing: "The namespace {{namespace}} (LAB_NAMESPACE) does not exist: no session can start.",
  namespaceCreateFix: "Apply deploy/base, or: kubectl create namespace {{namespace}} && {{labelFix}}",
  namespaceWhyPrivileged:
    "virt-launcher pods need privileges (KVM and tun devices, extra capabilities), which only the privileged Pod Security level admits.",
  namespacePrivileged: "{{namespace}} enforces the privileged Pod Security level.",
  namespaceNoLabel: "{{namespace}} has no {{label}} label: the cluster's default level applies.",
  namespaceDefaultRisk:
    "If the cluster's default is baseline or restricted, launcher pods are refused and VMs never start.",
  namespaceRefused:
    "{{namespace}} enforces the {{level}} Pod Security level: launcher pods are refused and no VM starts.",

  permissionsTitle: "The console's own permissions",
  accessReviewsRefused: "The API server would not answer access reviews: {{error}}",
  accessReviewsFix:
    "The console needs `create selfsubjectaccessreviews.authorization.k8s.io` (every authenticated user has it by default).",
  scopeIn: " in {{namespace}}",
  scopeClusterWide: " cluster-wide",
  permissionMissing: "Missing: {{permission}}{{scope}} ({{why}}).",
  permissionDangerous: "Allowed but must not be: {{permission}}{{scope}}. {{why}}",
  permissionNotNeeded: "Allowed but not needed: {{permission}}{{scope}} ({{why}}).",
  runAsConsoleHint:
    "If the doctor ran with an administrator's kubeconfig instead of the console's own, run it as the console: `kubectl -n lab-console exec deploy/lab-console -- npm run doctor`, or open the instructor page.",
  permissionsDangerous: "The console's credentials may {{what}}: a path to root on the nodes.",
  dangerousInNamespace: "{{what}} in {{namespace}}",
  dangerousClusterWide: "{{what}} cluster-wide",
  dangerousBoth: "{{inNamespace}} and {{clusterWide}}",
  permissionsDangerousFix:
    "Bind the console's service account only to the roles in deploy/base (rbac-sessions.yaml, rbac-cluster.yaml, rbac-leases.yaml) and remove every other binding (`kubectl get rolebindings,clusterrolebindings -A -o wide | grep lab-console`).",
  permissionsMissing: "The console lacks {{missing}} permission(s) it needs.",
  permissionsMissingFix:
    "Apply the RBAC in deploy/base (rbac-sessions.yaml, rbac-cluster.yaml, rbac-leases.yaml) to the console's service account.",
  permissionsTooMuch: "The console has everything it needs, and more than it should.",
  permissionsOk:
    "Everything the console needs is allowed ({{checks}} checks); it cannot create, exec into or attach to pods in {{namespace}}, nor reach the kubelets' API.",

  cpuRatioTitle: "CPU allocation ratio",
  kubeVirtResourceUnknown: "Not known: the KubeVirt resource could not be read.",
  cpuRatio: "cpuAllocationRatio is {{ratio}}: each vCPU requests {{millis}}m of a node's CPU.",
  cpuRatioDefault:
    "cpuAllocationRatio is {{ratio}} (the default): each vCPU requests {{millis}}m of a node's CPU.",
  cpuRatioExample:
    "A 2 vCPU / 4Gi lab VM's compute container requests {{cpu}}m CPU and {{memory}}Mi memory, its console-log sidecar 5m and 35M; the capacity estimate uses the same numbers.",

  serialLogTitle: "Serial console log",
  serialLogOff:
    "Off cluster-wide (virtualMachineOptions.disableSerialConsoleLog); Lab Console's VMs turn it on for themselves.",
  serialLogOn: "On: every VM's serial output is kept in its guest-console-log container.",
  serialLogWhy:
    "Lab Console's VMs set logSerialConsole: true, which overrides the cluster's default, so boot output written while nobody watched can be shown. Each VM's sidecar requests 5m CPU and 35M memory.",

  warmPatchesTitle: "Warm VMs can be claimed",
  warmPatchesOk: "The cluster refused no claim or ready mark of a warm VM.",
  warmPatchesRefusedOne:
    "The cluster refused 1 patch on warm VMs since this console started: launches started their VMs cold instead.",
  warmPatchesRefused:
    "The cluster refused {{refused}} patches on warm VMs since this console started: launches started their VMs cold instead.",
  warmPatchLastClaim: "Last, at {{at}}: a launch's claim of {{vm}}: {{message}}",
  warmPatchLastReadyMark: "Last, at {{at}}: the ready mark on {{vm}}: {{message}}",
  warmPatchesCounted:
    "Claims and ready marks only change a VM's labels and annotations; each is also counted in /metrics as lab_console_warm_patch_refusals_total.",
  warmPatchesFix:
    "Find what refuses metadata changes on VirtualMachines in the session namespace: usually an admission webhook (the message names it). `{{command}}` shows the same answer.",
} as const;

export type DoctorTextKey = keyof typeof doctorTexts;

/**
 * One sentence: its key and params. A param may be a sentence itself (a clause such as "because …"),
 * or several, said one per line.
 */
export interface DoctorText {
  key: string;
  params: Record<string, DoctorParam>;
}
export type DoctorParam = string | number | DoctorText | DoctorText[];

export const DoctorText: z.ZodMiniType<DoctorText> = z.object({
  key: z.string(),
  params: z.record(
    z.string(),
    z.union([z.string(), z.number(), z.lazy(() => DoctorText), z.array(z.lazy(() => DoctorText))]),
  ),
});

/** A sentence to say: `say("kvmWith", { names })`. */
export function say(key: DoctorTextKey, params: Record<string, DoctorParam> = {}): DoctorText {
  return { key, params };
}

/** Text that is not language (a command, what the cluster answered), as a sentence of its own. */
export function verbatim(text: string): DoctorText {
  return say("verbatim", { text });
}

/**
 * A sentence in a language: `template` gives a key's words ({{params}} in them), or undefined for a
 * key it does not know, which is then said in English (a newer server's sentence).
 */
export function renderDoctorText(
  text: DoctorText,
  template: (key: string) => string | undefined = englishTemplate,
): string {
  const words = template(text.key) ?? englishTemplate(text.key) ?? text.key;
  return words.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, name: string) => {
    const value = text.params[name];
    if (value === undefined) return whole;
    if (Array.isArray(value)) return value.map((each) => renderDoctorText(each, template)).join("\n");
    return typeof value === "object" ? renderDoctorText(value, template) : String(value);
  });
}

function englishTemplate(key: string): string | undefined {
  return Object.hasOwn(doctorTexts, key) ? doctorTexts[key as DoctorTextKey] : undefined;
}
