// The cluster objects of one session: the VirtualMachine and the Secret with its cloud-init user data.
import { randomInt } from "node:crypto";
import type { Lab } from "../../common/lab.ts";
import type { Secret, VirtualMachine } from "../kube/types.ts";
import {
  mergeCloudConfigs,
  parseCloudConfig,
  renderCloudConfig,
  type CloudConfig,
} from "../labs/cloud-config.ts";
import { agentUnitName } from "../agent/delivery.ts";
import { annotationKeys, sessionLabels } from "./labels.ts";

/** The account students get in every guest; checks run as this user. */
export const guestUsername = "student";

export const userDataKey = "userdata";

const sessionIdPattern = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const sessionIdSuffixLength = 8;
const sessionIdAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";

/** `${labId}-${8 random [a-z0-9]}`: also the VM's name, so an RFC 1123 label. */
export function newSessionId(labId: string): string {
  let suffix = "";
  for (let i = 0; i < sessionIdSuffixLength; i++)
    suffix += sessionIdAlphabet[randomInt(sessionIdAlphabet.length)];
  return `${labId}-${suffix}`;
}

export function cloudInitSecretName(sessionId: string): string {
  return `${sessionId}-cloudinit`;
}

export interface SessionObjectsInput {
  sessionId: string;
  lab: Lab;
  /**
   * The raw username (it only ever lands in annotations), or the scheduled class a warm VM waits for:
   * that one has no owner and no expiry until a launch claims it.
   */
  owner: string | { warmFor: string };
  /** The owner's section (access/sections.ts launchSectionOf); none for a warm VM or without sections. */
  section?: string | null;
  namespace: string;
  expiresAt: Date | undefined;
  /**
   * The lab agent's #cloud-config (agent/delivery.ts). Its files are merged after the
   * lab's; its runcmd runs first of all, the getty restart that starts the student's shell last.
   */
  agentUserData?: string;
}

export function buildSessionObjects(input: SessionObjectsInput): {
  virtualMachine: VirtualMachine;
  userDataSecret: Secret;
} {
  const { sessionId, lab, owner, namespace } = input;
  if (!sessionIdPattern.test(sessionId) || sessionId.length > 63) {
    throw new Error(`session id ${JSON.stringify(sessionId)} is not an RFC 1123 label`);
  }
  const labels = sessionLabels({ sessionId, labId: lab.id, owner, section: input.section });
  const ownerAnnotation: Record<string, string> =
    typeof owner === "string" ? { [annotationKeys.owner]: owner } : {};
  const graphical = lab.session.consoles.includes("graphical");
  const expiry: Record<string, string> = input.expiresAt
    ? { [annotationKeys.expiresAt]: input.expiresAt.toISOString(), [annotationKeys.extensions]: "0" }
    : {};

  const virtualMachine: VirtualMachine = {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachine",
    metadata: {
      name: sessionId,
      namespace,
      labels,
      annotations: { ...ownerAnnotation, ...expiry },
    },
    spec: {
      // Always, not the deprecated `running: true`: the API rejects both together.
      runStrategy: "Always",
      template: {
        // The VMI and its launcher pod inherit these; the VM's own labels do not propagate.
        metadata: { labels: { ...labels }, annotations: { ...ownerAnnotation } },
        spec: {
          domain: {
            cpu: {
              cores: lab.vm.cpu,
              sockets: 1,
              threads: 1,
              // Nested labs only: host-passthrough schedules anywhere; live migration needs an identical CPU.
              ...(lab.vm.nested ? { model: "host-passthrough" } : {}),
            },
            memory: { guest: lab.vm.memory },
            resources: { requests: { memory: lab.vm.memory } },
            devices: {
              autoattachSerialConsole: true,
              logSerialConsole: true,
              disks: [
                { name: "rootdisk", disk: { bus: "virtio" } },
                { name: "cloudinitdisk", disk: { bus: "virtio" } },
              ],
              interfaces: [{ name: "default", masquerade: {} }],
              // A pointer that goes where the viewer's does: KubeVirt gives amd64 guests only a PS/2
              // mouse, whose relative motion drifts from a VNC viewer's absolute pointer.
              ...(graphical ? { inputs: [{ name: "tablet", type: "tablet", bus: "usb" }] } : {}),
            },
          },
          networks: [{ name: "default", pod: {} }],
          volumes: [
            { name: "rootdisk", containerDisk: { image: lab.vm.image } },
            {
              name: "cloudinitdisk",
              cloudInitNoCloud: { secretRef: { name: cloudInitSecretName(sessionId) } },
            },
          ],
          // Practice VMs hold nothing worth a long shutdown; ending a session should be quick.
          terminationGracePeriodSeconds: 30,
        },
      },
    },
  };

  const agent: CloudConfig =
    input.agentUserData === undefined ? {} : readPart(input.agentUserData, "agentUserData");
  const { runcmd: agentRuncmd, ...agentPart } = agent;
  const merged = mergeCloudConfigs([
    generatedCloudConfig(graphical),
    ...(lab.vm.cloudInit === null ? [] : [readPart(lab.vm.cloudInit, `lab ${lab.id} cloudInit`)]),
    agentPart,
  ]);
  // The agent listens, and the lab's own commands (run as root) are done, before any process of the
  // student's exists: the getty restart that starts the student's shell comes last (docs/grading.md).
  // Commands the agent's part already ran (it reloads systemd for its own unit) are not run twice.
  const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  const runcmd = [...listOf(agentRuncmd), ...listOf(merged.runcmd)];
  const startConsole = [
    "systemctl daemon-reload",
    "systemctl restart serial-getty@ttyS0.service",
    ...(graphical ? [`systemctl restart ${tty1Getty}`] : []),
  ];
  merged.runcmd = [...runcmd, ...startConsole.filter((command) => !runcmd.includes(command))];
  const userData = renderCloudConfig(merged);
  const userDataSecret: Secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: cloudInitSecretName(sessionId), namespace, labels: { ...labels } },
    type: "Opaque",
    data: { [userDataKey]: Buffer.from(userData, "utf8").toString("base64") },
  };
  return { virtualMachine, userDataSecret };
}

/**
 * The user-data Secret, owned by its VM: deleting the VM then deletes it too. It can only name its
 * owner once the VM exists and has a uid, so the VM is created first. Where the admission plugin
 * OwnerReferencesPermissionEnforcement runs, setting any owner needs delete on the Secret itself
 * (deploy/ grants it for that reason alone).
 */
export function ownedByVm(secret: Secret, vm: VirtualMachine): Secret {
  return {
    ...secret,
    metadata: {
      ...secret.metadata,
      ownerReferences: [
        {
          apiVersion: vm.apiVersion,
          kind: vm.kind,
          name: vm.metadata.name ?? "",
          uid: vm.metadata.uid ?? "",
          // No blockOwnerDeletion: that plugin would then also ask for update on
          // virtualmachines/finalizers, which nothing else needs.
        },
      ],
    },
  };
}

const tty1Getty = "getty@tty1.service";

/**
 * Our part of the user data: a student account that the serial console logs in automatically, and
 * for labs with a graphical console the VM's screen (tty1) too. Only the owner and staff can reach
 * those consoles (the BFF checks), so a password would add nothing. The gettys may already be up by
 * the time cloud-init writes the drop-ins: buildSessionObjects restarts them at the end of runcmd.
 * Labs without a graphical console keep tty1 at its login prompt, which no password opens.
 */
function generatedCloudConfig(graphical: boolean): CloudConfig {
  return {
    users: [{ name: guestUsername, gecos: "Lab Console student", shell: "/bin/bash", lock_passwd: true }],
    write_files: [
      {
        path: "/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf",
        permissions: "0644",
        content: [
          "[Service]",
          "ExecStart=",
          `ExecStart=-/sbin/agetty --autologin ${guestUsername} --noclear --keep-baud 115200,57600,38400,9600 - $TERM`,
          "",
        ].join("\n"),
      },
      ...(graphical ? [tty1Autologin()] : []),
    ],
  };
}

/**
 * Debian 12's getty@.service with the student logged in: its ExecStart, `agetty -o '-p -- \\u'
 * --noclear - $TERM`, plus --autologin and login's -f. The -f must be in -o: agetty adds it for
 * --autologin only to the login command line it composes itself, and -o replaces that whole line
 * (util-linux agetty.c), so without it login asks the student for a password (seen on the real
 * guest). Ordered after the lab agent, as the agent's unit orders itself before the serial getty
 * (agent/delivery.ts): at every boot after the first no process of the student's exists
 * before the agent listens. The order is set here, from the getty's side (After= is Before= seen
 * from the other unit), so that labs without a graphical console keep the very user data they had.
 */
function tty1Autologin() {
  return {
    path: `/etc/systemd/system/${tty1Getty}.d/autologin.conf`,
    permissions: "0644",
    content: [
      "[Unit]",
      `After=${agentUnitName}`,
      "",
      "[Service]",
      "ExecStart=",
      `ExecStart=-/sbin/agetty -o '-p -f -- \\\\u' --autologin ${guestUsername} --noclear - $TERM`,
      "",
    ].join("\n"),
  };
}

function readPart(text: string, what: string): CloudConfig {
  const parsed = parseCloudConfig(text);
  if (parsed.ok) return parsed.config;
  const reasons = parsed.problems.map((p) => (p.line === null ? p.message : `line ${p.line}: ${p.message}`));
  throw new Error(`${what} is not a usable #cloud-config: ${reasons.join("; ")}`);
}
