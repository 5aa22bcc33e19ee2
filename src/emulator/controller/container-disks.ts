// How a launcher pod carries the VMI's containerDisks, and what becomes of it when the two sides of
// the ImageVolume feature disagree.
//
// KubeVirt (pkg/virt-controller/services/template.go, rendervolumes.go withImageVolumes,
// pkg/container-disk/container-disk.go): with its ImageVolume gate on, each containerDisk is an `image`
// pod volume, and a no-op init container per disk runs /container-disk-binary/usr/bin/container-disk
// from the launcher image, itself mounted as the image volume "launcher-volume". With the gate off,
// an init container copies that binary into an emptyDir and a helper container per disk serves it.
//
// Kubernetes (pkg/api/pod/util.go dropDisabledFields): with the API server's ImageVolume gate off,
// `image` volumes and the mounts that use them are silently removed from a new pod. The init container
// then has no binary to run, the kubelet fails it with StartError, and the pod (restartPolicy Never)
// fails: the field incident behind the doctor's ImageVolume check.
import { field, isJsonObject, stringField, timestamp, type JsonObject } from "../cluster/objects.ts";

const launcherVolume = "launcher-volume";
const binaryMount = "/container-disk-binary";
const containerDiskBinary = `${binaryMount}/usr/bin/container-disk`;
const imageVolumeDir = "/var/run/kubevirt/image-volume";
const helperResources = {
  requests: { cpu: "1m", memory: "1M", "ephemeral-storage": "50M" },
  limits: { cpu: "10m", memory: "40M" },
};
const nonRoot = {
  runAsUser: 107,
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ["ALL"] },
};

interface ContainerDiskVolume {
  name: string;
  image: string;
  index: number;
}

function containerDisksOf(vmi: unknown): ContainerDiskVolume[] {
  const volumes = field(vmi, "spec", "volumes");
  if (!Array.isArray(volumes)) return [];
  return volumes.flatMap((volume, index) => {
    const image = stringField(volume, "containerDisk", "image");
    const name = stringField(volume, "name");
    return image && name ? [{ name, image, index }] : [];
  });
}

function list(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isJsonObject) : [];
}

/** What the containerDisks add to a launcher pod. */
interface DiskParts {
  volumes: JsonObject[];
  initContainers: JsonObject[];
  /** Helper containers that run beside compute. */
  containers: JsonObject[];
  computeMounts: JsonObject[];
}

/** KubeVirt's ImageVolume gate on: the disks and the launcher image are `image` volumes. */
function imageVolumeParts(disks: ContainerDiskVolume[], launcherImage: string): DiskParts {
  return {
    volumes: [
      ...disks.map((disk) => ({
        name: disk.name,
        image: { reference: disk.image, pullPolicy: "IfNotPresent" },
      })),
      { name: launcherVolume, image: { reference: launcherImage, pullPolicy: "IfNotPresent" } },
    ],
    initContainers: disks.map((disk) => ({
      name: `volume${disk.name}`,
      image: disk.image,
      command: [containerDiskBinary],
      args: ["--no-op"],
      resources: helperResources,
      securityContext: nonRoot,
      volumeMounts: [{ name: launcherVolume, mountPath: binaryMount, readOnly: true }],
    })),
    containers: [],
    computeMounts: disks.map((disk) => ({
      name: disk.name,
      mountPath: `${imageVolumeDir}/disk_${disk.index}`,
      readOnly: true,
    })),
  };
}

/** The gate off: the binary is copied into an emptyDir and a helper container serves each disk. */
function copiedDiskParts(disks: ContainerDiskVolume[], launcherImage: string): DiskParts {
  const diskMounts = [
    { name: "container-disks", mountPath: "/var/run/kubevirt/container-disks" },
    { name: "virt-bin-share-dir", mountPath: "/usr/bin" },
  ];
  const helper = (disk: ContainerDiskVolume, init: boolean) => ({
    name: init ? `volume${disk.name}-init` : `volume${disk.name}`,
    image: disk.image,
    command: ["/usr/bin/container-disk"],
    args: init ? ["--no-op"] : ["--copy-path", `/var/run/kubevirt/container-disks/disk_${disk.index}`],
    resources: helperResources,
    securityContext: nonRoot,
    volumeMounts: diskMounts,
  });
  return {
    volumes: [
      { name: "container-disks", emptyDir: {} },
      { name: "virt-bin-share-dir", emptyDir: {} },
    ],
    initContainers: [
      {
        name: "container-disk-binary",
        image: launcherImage,
        command: ["/usr/bin/cp", "--preserve=all", "/usr/bin/container-disk", "/init/usr/bin/container-disk"],
        resources: helperResources,
        volumeMounts: [{ name: "virt-bin-share-dir", mountPath: "/init/usr/bin" }],
      },
      ...disks.map((disk) => helper(disk, true)),
    ],
    containers: disks.map((disk) => helper(disk, false)),
    computeMounts: [],
  };
}

/** The launcher pod with its containerDisk volumes and containers, for KubeVirt's ImageVolume gate. */
export function withContainerDisks(
  pod: JsonObject,
  vmi: unknown,
  options: { imageVolumes: boolean; launcherImage: string },
): JsonObject {
  const disks = containerDisksOf(vmi);
  if (disks.length === 0) return pod;
  const parts = (options.imageVolumes ? imageVolumeParts : copiedDiskParts)(disks, options.launcherImage);
  const spec = isJsonObject(pod.spec) ? pod.spec : {};
  const [compute = {}, ...others] = list(spec.containers);
  return {
    ...pod,
    spec: {
      ...spec,
      volumes: [...list(spec.volumes), ...parts.volumes],
      initContainers: [...list(spec.initContainers), ...parts.initContainers],
      // compute stays first: KubeVirt keeps it there for webhooks that patch the first container.
      containers: [
        { ...compute, volumeMounts: [...list(compute.volumeMounts), ...parts.computeMounts] },
        ...parts.containers,
        ...others,
      ],
    },
  };
}

/** The API server with its ImageVolume gate off: `image` volumes and their mounts are dropped, silently. */
export function withoutImageVolumes(pod: JsonObject): JsonObject {
  const spec = isJsonObject(pod.spec) ? pod.spec : {};
  const dropped = new Set(
    list(spec.volumes)
      .filter((volume) => volume.image !== undefined)
      .map((volume) => String(volume.name)),
  );
  if (dropped.size === 0) return pod;
  const unmount = (containers: unknown) =>
    list(containers).map((container) => ({
      ...container,
      ...(Array.isArray(container.volumeMounts)
        ? { volumeMounts: list(container.volumeMounts).filter((mount) => !dropped.has(String(mount.name))) }
        : {}),
    }));
  return {
    ...pod,
    spec: {
      ...spec,
      volumes: list(spec.volumes).filter((volume) => !dropped.has(String(volume.name))),
      ...(spec.initContainers === undefined ? {} : { initContainers: unmount(spec.initContainers) }),
      containers: unmount(spec.containers),
    },
  };
}

/**
 * The first init container the kubelet cannot start: one whose command lives on a mount it no longer
 * has (only the container-disk binary is modelled).
 */
export function unstartableInitContainer(pod: unknown): string | undefined {
  for (const container of list(field(pod, "spec", "initContainers"))) {
    const command = field(container, "command", 0);
    const mounted = list(container.volumeMounts).some((mount) => mount.mountPath === binaryMount);
    if (command === containerDiskBinary && !mounted) return String(container.name);
  }
  return undefined;
}

/** The pod as the kubelet reports an init container that failed to start (containerd's StartError). */
export function initContainerStartErrorStatus(
  previous: JsonObject,
  container: string,
  image: string,
): JsonObject {
  const message = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: "${containerDiskBinary}": stat ${containerDiskBinary}: no such file or directory: unknown`;
  return {
    ...previous,
    phase: "Failed",
    conditions: [
      { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: timestamp() },
      {
        type: "Initialized",
        status: "False",
        reason: "ContainersNotInitialized",
        message: `containers with incomplete status: [${container}]`,
        lastProbeTime: null,
        lastTransitionTime: timestamp(),
      },
      {
        type: "Ready",
        status: "False",
        reason: "PodFailed",
        lastProbeTime: null,
        lastTransitionTime: timestamp(),
      },
    ],
    initContainerStatuses: [
      {
        name: container,
        image,
        imageID: "",
        ready: false,
        restartCount: 0,
        started: false,
        state: { terminated: { exitCode: 128, reason: "StartError", message, finishedAt: timestamp() } },
      },
    ],
  };
}
