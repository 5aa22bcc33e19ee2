// Builders for test objects, with overrides.

export interface VmOptions {
  namespace?: string;
  runStrategy?: string;
  /** Set to use the deprecated spec.running instead of runStrategy. */
  running?: boolean;
  cores?: number;
  memory?: string;
  labels?: Record<string, string>;
  templateLabels?: Record<string, string>;
  /** A cloud-init Secret the VMI must mount before it runs. */
  userDataSecret?: string;
  /** Inline cloud-init user data (cloudInitNoCloud.userData). */
  userData?: string;
  /** false: spec.domain.devices.autoattachSerialConsole false (no console). */
  serialConsole?: boolean;
  /** false: no graphics device (autoattachGraphicsDevice: false). */
  graphics?: boolean;
  /** The containerDisk image; default KubeVirt's cirros demo disk (the guests' default manifest). */
  image?: string;
}

export function vmManifest(name: string, options: VmOptions = {}): Record<string, unknown> {
  const volumes: unknown[] = [
    {
      name: "containerdisk",
      containerDisk: { image: options.image ?? "quay.io/kubevirt/cirros-container-disk-demo" },
    },
  ];
  if (options.userDataSecret) {
    volumes.push({
      name: "cloudinitdisk",
      cloudInitNoCloud: { secretRef: { name: options.userDataSecret } },
    });
  } else if (options.userData !== undefined) {
    volumes.push({ name: "cloudinitdisk", cloudInitNoCloud: { userData: options.userData } });
  }
  return {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachine",
    metadata: {
      name,
      namespace: options.namespace ?? "lab-sessions",
      labels: options.labels ?? { app: "lab" },
    },
    spec: {
      ...(options.running !== undefined
        ? { running: options.running }
        : { runStrategy: options.runStrategy ?? "Always" }),
      template: {
        metadata: { labels: options.templateLabels ?? { "labconsole.dev/session": name } },
        spec: {
          domain: {
            cpu: { cores: options.cores ?? 1 },
            memory: { guest: options.memory ?? "1Gi" },
            devices: {
              disks: [{ name: "containerdisk", disk: { bus: "virtio" } }],
              interfaces: [{ name: "default", masquerade: {} }],
              ...(options.serialConsole === false ? { autoattachSerialConsole: false } : {}),
              ...(options.graphics === false ? { autoattachGraphicsDevice: false } : {}),
            },
          },
          networks: [{ name: "default", pod: {} }],
          volumes,
        },
      },
    },
  };
}
