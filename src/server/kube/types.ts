// Hand-written shapes of the Kubernetes and KubeVirt objects Lab Console reads and writes.
// Only the fields we use; the cluster sends more, and TypeScript lets the rest pass unseen.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

export interface KubeList<T> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** A condition as both VirtualMachine and VirtualMachineInstance report them. */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason?: string;
  message?: string;
  lastTransitionTime?: string | null;
  lastProbeTime?: string | null;
}

export type RunStrategy = "Always" | "RerunOnFailure" | "Once" | "Manual" | "Halted" | "WaitAsReceiver";

export type VirtualMachinePrintableStatus =
  | "Stopped"
  | "Provisioning"
  | "Starting"
  | "Running"
  | "Paused"
  | "Stopping"
  | "Terminating"
  | "CrashLoopBackOff"
  | "Migrating"
  | "Unknown"
  | "ErrorUnschedulable"
  | "ErrImagePull"
  | "ImagePullBackOff"
  | "ErrorPvcNotFound"
  | "DataVolumeError"
  | "WaitingForVolumeBinding"
  | "WaitingForReceiver";

export interface Disk {
  name: string;
  disk: { bus: "virtio" | "sata" | "scsi" | "usb" };
}

export interface Interface {
  name: string;
  masquerade?: Record<string, never>;
}

export interface Volume {
  name: string;
  containerDisk?: { image: string };
  cloudInitNoCloud?: { secretRef: { name: string } };
}

export interface VirtualMachineInstanceSpec {
  domain: {
    cpu: { cores: number; sockets: number; threads: number; model?: string };
    memory: { guest: string };
    resources: { requests: { memory: string } };
    devices: {
      autoattachSerialConsole?: boolean;
      logSerialConsole?: boolean;
      disks: Disk[];
      interfaces: Interface[];
    };
  };
  networks: { name: string; pod?: Record<string, never> }[];
  volumes: Volume[];
  terminationGracePeriodSeconds?: number;
}

export interface VirtualMachine {
  apiVersion: "kubevirt.io/v1";
  kind: "VirtualMachine";
  metadata: ObjectMeta;
  spec: {
    runStrategy?: RunStrategy;
    /** Deprecated spelling of runStrategy; we never write it but may read it from others' VMs. */
    running?: boolean;
    template: { metadata: ObjectMeta; spec: VirtualMachineInstanceSpec };
  };
  status?: {
    printableStatus?: VirtualMachinePrintableStatus;
    created?: boolean;
    ready?: boolean;
    conditions?: Condition[];
    startFailure?: { consecutiveFailCount?: number; retryAfterTimestamp?: string };
    /** Pending start/stop requests; a restart is [Stop (old VMI uid), Start] until the new VMI exists. */
    stateChangeRequests?: { action: string; uid?: string }[];
  };
}

export type VirtualMachineInstancePhase =
  | ""
  | "Pending"
  | "Scheduling"
  | "Scheduled"
  | "Running"
  | "Succeeded"
  | "Failed"
  | "Unknown"
  | "WaitingForSync";

export interface VirtualMachineInstance {
  apiVersion: "kubevirt.io/v1";
  kind: "VirtualMachineInstance";
  metadata: ObjectMeta;
  spec?: VirtualMachineInstanceSpec;
  status?: {
    phase?: VirtualMachineInstancePhase;
    /** A CamelCase word saying why the VMI is in its phase, e.g. NodeUnresponsive. */
    reason?: string;
    phaseTransitionTimestamps?: { phase: VirtualMachineInstancePhase; phaseTransitionTimestamp: string }[];
    conditions?: Condition[];
    interfaces?: { name?: string; ipAddress?: string; ipAddresses?: string[]; mac?: string }[];
    nodeName?: string;
  };
}

export interface Secret {
  apiVersion: "v1";
  kind: "Secret";
  metadata: ObjectMeta;
  type?: string;
  /** Values base64-encoded, as the API returns them. */
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
}

/** networking.k8s.io/v1 NetworkPolicy, as far as the console writes one (egress to address ranges). */
export interface NetworkPolicy {
  apiVersion: "networking.k8s.io/v1";
  kind: "NetworkPolicy";
  metadata: ObjectMeta;
  spec: {
    podSelector: LabelSelector;
    policyTypes: ("Ingress" | "Egress")[];
    egress?: {
      to: { ipBlock: { cidr: string; except?: string[] } }[];
      ports: { protocol: "TCP" | "UDP"; port: number }[];
    }[];
  };
}
