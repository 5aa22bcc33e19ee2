import { readFileSync } from "node:fs";
import { Ajv, type ValidateFunction } from "ajv";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import type { Lab } from "../../common/lab.ts";
import type { VirtualMachine } from "../kube/types.ts";
import { defaultVmSizes, loadLabs } from "../labs/load-labs.ts";
import { ownerIdFor } from "./labels.ts";
import { aLab } from "./testing/fixtures.ts";
import { buildSessionObjects, cloudInitSecretName, guestUsername, newSessionId } from "./vm-manifest.ts";

const swaggerUrl = new URL("../../emulator/apiserver/openapi/kubevirt-swagger.json", import.meta.url);

/**
 * KubeVirt's swagger definitions rarely say additionalProperties, so a misspelt field would pass.
 * Every object schema that lists its properties gets additionalProperties: false, as the real API
 * server's structural schemas prune (and kubectl --validate=strict rejects) unknown fields.
 */
function forbidUnknownFields(schema: unknown): void {
  if (Array.isArray(schema)) {
    schema.forEach(forbidUnknownFields);
  } else if (typeof schema === "object" && schema !== null) {
    const record = schema as Record<string, unknown>;
    if (typeof record.properties === "object" && !("additionalProperties" in record)) {
      record.additionalProperties = false;
    }
    Object.values(record).forEach(forbidUnknownFields);
  }
}

function virtualMachineValidator(): ValidateFunction {
  const swagger = JSON.parse(readFileSync(swaggerUrl, "utf8")) as { definitions: Record<string, unknown> };
  forbidUnknownFields(swagger.definitions);
  // Swagger 2.0 definitions are draft-04 style: unknown keywords (x-kubernetes-*) and formats
  // (int32, int64, byte) are not errors. Refs point at #/definitions/..., which this root provides.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: "kubevirt.json", definitions: swagger.definitions });
  const validate = ajv.getSchema("kubevirt.json#/definitions/v1.VirtualMachine");
  if (!validate) throw new Error("v1.VirtualMachine is missing from the swagger file");
  return validate;
}

const exampleLabs = loadLabs(new URL("../../../labs", import.meta.url).pathname, defaultVmSizes).labs;
const expiresAt = new Date("2026-08-22T11:00:00Z");

function build(lab: Lab, agentUserData?: string) {
  const sessionId = `${lab.id}-a1b2c3d4`;
  return {
    sessionId,
    ...buildSessionObjects({
      sessionId,
      lab,
      owner: "Ana María O'Neil",
      namespace: "lab-sessions",
      expiresAt,
      ...(agentUserData === undefined ? {} : { agentUserData }),
    }),
  };
}

function userDataOf(objects: ReturnType<typeof build>): string {
  const encoded = objects.userDataSecret.data?.userdata;
  if (encoded === undefined) throw new Error("no userdata in the Secret");
  return Buffer.from(encoded, "base64").toString("utf8");
}

describe("buildSessionObjects: the VirtualMachine", () => {
  let validate: ValidateFunction;
  beforeAll(() => {
    validate = virtualMachineValidator();
  });

  it("has all four example labs to check", () => {
    expect(exampleLabs.map((lab) => lab.id).sort()).toEqual([
      "git-workflow",
      "linux-basics",
      "nested-kvm",
      "screen-basics",
    ]);
  });

  it.each(exampleLabs.map((lab) => [lab.id, lab] as const))(
    "is a valid KubeVirt v1.VirtualMachine for %s",
    (_id, lab) => {
      const { virtualMachine } = build(lab);
      const valid = validate(virtualMachine);
      expect(validate.errors ?? []).toEqual([]);
      expect(valid).toBe(true);
    },
  );

  it("would fail validation with an unknown or mistyped field", () => {
    const { virtualMachine } = build(aLab());
    const misspelt = structuredClone(virtualMachine) as unknown as {
      spec: { template: { spec: { domain: { cpu: Record<string, unknown> } } } };
    };
    misspelt.spec.template.spec.domain.cpu.modle = "host-passthrough";
    expect(validate(misspelt)).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({
      keyword: "additionalProperties",
      params: { additionalProperty: "modle" },
    });

    const mistyped = structuredClone(virtualMachine) as unknown as { spec: { runStrategy: unknown } };
    mistyped.spec.runStrategy = true;
    expect(validate(mistyped)).toBe(false);
  });

  it("runs by runStrategy Always and never sets the deprecated running", () => {
    const { virtualMachine } = build(aLab());
    expect(virtualMachine.spec.runStrategy).toBe("Always");
    expect(virtualMachine.spec).not.toHaveProperty("running");
  });

  it("is named after the session and labelled on the VM and its template", () => {
    const { sessionId, virtualMachine } = build(aLab());
    const labels = {
      "app.kubernetes.io/managed-by": "lab-console",
      "labconsole.dev/session": sessionId,
      "labconsole.dev/lab": "linux-basics",
      "labconsole.dev/owner-id": ownerIdFor("Ana María O'Neil"),
    };
    expect(virtualMachine.metadata).toEqual({
      name: sessionId,
      namespace: "lab-sessions",
      labels,
      annotations: {
        "labconsole.dev/owner": "Ana María O'Neil",
        "labconsole.dev/expires-at": "2026-08-22T11:00:00.000Z",
        "labconsole.dev/extensions": "0",
      },
    });
    expect(virtualMachine.spec.template.metadata).toEqual({
      labels,
      annotations: { "labconsole.dev/owner": "Ana María O'Neil" },
    });
  });

  it("keeps the raw username out of every label", () => {
    const { virtualMachine, userDataSecret } = build(aLab());
    const labelValues = [
      virtualMachine.metadata,
      virtualMachine.spec.template.metadata,
      userDataSecret.metadata,
    ].flatMap((metadata) => Object.values(metadata.labels ?? {}));
    expect(labelValues.length).toBeGreaterThan(0);
    for (const value of labelValues) expect(value).toMatch(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/);
  });

  it("gives the lab's vCPUs as cores of one socket and its memory as guest memory and request", () => {
    const domain = build(aLab({ vm: { ...aLab().vm, cpu: 4, memory: "8Gi" } })).virtualMachine.spec.template
      .spec.domain;
    expect(domain.cpu).toEqual({ cores: 4, sockets: 1, threads: 1 });
    expect(domain.memory).toEqual({ guest: "8Gi" });
    expect(domain.resources).toEqual({ requests: { memory: "8Gi" } });
  });

  it("asks for host-passthrough only for nested labs", () => {
    const cpuOf = (vm: VirtualMachine) => vm.spec.template.spec.domain.cpu;
    const nested = exampleLabs.find((lab) => lab.vm.nested);
    const plain = exampleLabs.filter((lab) => !lab.vm.nested);
    expect(nested && cpuOf(build(nested).virtualMachine).model).toBe("host-passthrough");
    expect(plain.length).toBeGreaterThan(0);
    for (const lab of plain) expect(cpuOf(build(lab).virtualMachine)).not.toHaveProperty("model");
  });

  it("boots the lab image and reads cloud-init from the session's Secret, on virtio disks", () => {
    const { sessionId, virtualMachine } = build(aLab());
    const spec = virtualMachine.spec.template.spec;
    expect(spec.volumes).toEqual([
      { name: "rootdisk", containerDisk: { image: "quay.io/containerdisks/fedora:41" } },
      { name: "cloudinitdisk", cloudInitNoCloud: { secretRef: { name: `${sessionId}-cloudinit` } } },
    ]);
    expect(spec.domain.devices.disks).toEqual([
      { name: "rootdisk", disk: { bus: "virtio" } },
      { name: "cloudinitdisk", disk: { bus: "virtio" } },
    ]);
  });

  it("has a logged serial console, the pod network with masquerade and a short grace period", () => {
    const spec = build(aLab()).virtualMachine.spec.template.spec;
    expect(spec.domain.devices).toMatchObject({ autoattachSerialConsole: true, logSerialConsole: true });
    expect(spec.domain.devices.interfaces).toEqual([{ name: "default", masquerade: {} }]);
    expect(spec.networks).toEqual([{ name: "default", pod: {} }]);
    expect(spec.terminationGracePeriodSeconds).toBe(30);
  });

  it("refuses a session id that cannot be a VM name", () => {
    for (const sessionId of ["Linux-Basics-1", "linux_basics-1", "-x", "a".repeat(64)]) {
      expect(() =>
        buildSessionObjects({ sessionId, lab: aLab(), owner: "ana", namespace: "n", expiresAt }),
      ).toThrow(/RFC 1123/);
    }
  });
});

describe("buildSessionObjects: the cloud-init Secret", () => {
  it("is an Opaque Secret named after the session, labelled like the VM, with key userdata", () => {
    const { sessionId, virtualMachine, userDataSecret } = build(aLab());
    expect(userDataSecret).toMatchObject({
      apiVersion: "v1",
      kind: "Secret",
      type: "Opaque",
      metadata: {
        name: cloudInitSecretName(sessionId),
        namespace: "lab-sessions",
        labels: virtualMachine.metadata.labels,
      },
    });
    expect(Object.keys(userDataSecret.data ?? {})).toEqual(["userdata"]);
  });

  it("holds a #cloud-config that creates the student account and logs it in on the serial console", () => {
    const userData = userDataOf(build(aLab()));
    expect(userData.startsWith("#cloud-config\n")).toBe(true);
    const config = parse(userData) as Record<string, unknown[]>;
    expect(config.users).toEqual([expect.objectContaining({ name: guestUsername, shell: "/bin/bash" })]);
    expect(config.write_files).toEqual([
      expect.objectContaining({
        path: "/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf",
        content: expect.stringContaining(`--autologin ${guestUsername}`),
      }),
    ]);
  });

  it("merges the lab's cloudInit and the agent's user data: lists joined, other keys kept", () => {
    const lab = aLab({
      vm: {
        ...aLab().vm,
        cloudInit: [
          "#cloud-config",
          "packages: [git]",
          "timezone: Europe/Vienna",
          "write_files:",
          "  - path: /etc/motd",
          "    content: hello",
          "runcmd:",
          "  - echo lab",
        ].join("\n"),
      },
    });
    const agent = [
      "#cloud-config",
      "write_files:",
      "  - path: /opt/agent.py",
      "    content: agent",
      "runcmd:",
      "  - echo agent",
    ];
    const config = parse(userDataOf(build(lab, agent.join("\n")))) as Record<string, unknown>;
    expect(config.packages).toEqual(["git"]);
    expect(config.timezone).toBe("Europe/Vienna");
    // The agent's files last, so that no lab file can take their place.
    expect((config.write_files as { path: string }[]).map((file) => file.path)).toEqual([
      "/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf",
      "/etc/motd",
      "/opt/agent.py",
    ]);
    // The agent's boot commands first, the lab's next, the getty restart (the student's shell) last.
    expect(config.runcmd).toEqual([
      "echo agent",
      "echo lab",
      "systemctl daemon-reload",
      "systemctl restart serial-getty@ttyS0.service",
    ]);
  });

  it("without an agent, runs the lab's commands, then reloads systemd and restarts the getty", () => {
    const lab = aLab({ vm: { ...aLab().vm, cloudInit: "#cloud-config\nruncmd:\n  - echo lab\n" } });
    expect((parse(userDataOf(build(lab))) as Record<string, unknown>).runcmd).toEqual([
      "echo lab",
      "systemctl daemon-reload",
      "systemctl restart serial-getty@ttyS0.service",
    ]);
  });

  it("reloads systemd once when the agent's part already did", () => {
    const agent =
      "#cloud-config\nruncmd:\n  - systemctl daemon-reload\n  - systemctl enable --now lab-agent.service\n";
    expect((parse(userDataOf(build(aLab(), agent))) as Record<string, unknown>).runcmd).toEqual([
      "systemctl daemon-reload",
      "systemctl enable --now lab-agent.service",
      "systemctl restart serial-getty@ttyS0.service",
    ]);
  });

  it("gives a graphical lab's VM a USB tablet, so the guest's pointer follows the viewer's; a text lab none", () => {
    const devicesOf = (lab: ReturnType<typeof aLab>) =>
      (build(lab).virtualMachine.spec.template.spec.domain.devices as { inputs?: unknown }).inputs;
    const graphicalLab = aLab({ session: { ...aLab().session, consoles: ["serial", "graphical"] } });
    expect(devicesOf(graphicalLab)).toEqual([{ name: "tablet", type: "tablet", bus: "usb" }]);
    expect(devicesOf(aLab())).toBeUndefined();
  });

  it("logs the student in on tty1 too for a graphical lab, after the agent, and restarts that getty last", () => {
    const lab = aLab({ session: { ...aLab().session, consoles: ["serial", "graphical"] } });
    const agent = "#cloud-config\nruncmd:\n  - systemctl enable --now lab-agent.service\n";
    const config = parse(userDataOf(build(lab, agent))) as Record<string, unknown>;
    const files = config.write_files as { path: string; content: string }[];
    const tty1 = files.find(
      (file) => file.path === "/etc/systemd/system/getty@tty1.service.d/autologin.conf",
    );
    // Debian 12's getty@.service ExecStart with --autologin; \\u stays escaped for systemd.
    expect(tty1?.content).toBe(
      [
        "[Unit]",
        "After=lab-agent.service",
        "",
        "[Service]",
        "ExecStart=",
        `ExecStart=-/sbin/agetty -o '-p -f -- \\\\u' --autologin ${guestUsername} --noclear - $TERM`,
        "",
      ].join("\n"),
    );
    expect(config.runcmd).toEqual([
      "systemctl enable --now lab-agent.service",
      "systemctl daemon-reload",
      "systemctl restart serial-getty@ttyS0.service",
      "systemctl restart getty@tty1.service",
    ]);
  });

  it("leaves tty1 at its login prompt for a lab without a graphical console: its user data is unchanged", () => {
    const serialOnly = userDataOf(build(aLab({ session: { ...aLab().session, consoles: ["serial"] } })));
    expect(serialOnly).not.toContain("tty1");
    const graphicalOnly = userDataOf(
      build(aLab({ session: { ...aLab().session, consoles: ["graphical"] } })),
    );
    expect(graphicalOnly).toContain("getty@tty1.service.d/autologin.conf");
  });

  it("merges the example labs' cloudInit", () => {
    const gitLab = exampleLabs.find((lab) => lab.id === "git-workflow");
    if (!gitLab) throw new Error("git-workflow lab missing");
    const config = parse(userDataOf(build(gitLab))) as Record<string, unknown>;
    expect((config.write_files as { path: string }[]).map((file) => file.path)).toContain("/etc/gitconfig");
  });

  it("refuses agent user data that is not a #cloud-config mapping", () => {
    expect(() => build(aLab(), "#!/bin/sh\necho hi")).toThrow(/agentUserData is not a usable #cloud-config/);
    expect(() => build(aLab(), "runcmd: echo hi")).toThrow(/runcmd must be a list/);
  });
});

describe("newSessionId", () => {
  it("appends 8 random lowercase letters or digits to the lab id", () => {
    const ids = new Set(Array.from({ length: 50 }, () => newSessionId("linux-basics")));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^linux-basics-[a-z0-9]{8}$/);
  });
});
