// KubeVirt's webhooks refuse a VM or VMI that asks for no memory, over the wire, with v1.9.0's words
// and field (validateMemoryIsProvided in pkg/virt-api/webhooks/validating-webhook/admitters/
// vmi-create-admitter.go); a zero quantity counts as none, any hugepages as some.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vmManifest } from "../../testing/manifests.ts";
import { jsonRequest } from "../../testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../../testing/start.ts";

const namespace = "lab-sessions";
const vmsPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`;
const vmisPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances`;

let cluster: TestEmulator;

beforeAll(async () => {
  cluster = await startTestEmulator();
});

afterAll(async () => {
  await cluster?.close();
});

interface Manifest {
  spec: { template: { spec: { domain: Record<string, unknown> } } };
}

/** A VM whose template's domain has this memory and these resources instead of memory.guest 1Gi. */
function vmAsking(name: string, memory: unknown, resources?: unknown): Manifest {
  const manifest = vmManifest(name) as unknown as Manifest;
  const domain = manifest.spec.template.spec.domain;
  if (memory === undefined) delete domain.memory;
  else domain.memory = memory;
  if (resources !== undefined) domain.resources = resources;
  return manifest;
}

const missing = (path: string) =>
  `${path}.domain.resources.requests.memory, ${path}.domain.resources.limits.memory, ${path}.domain.memory.hugepages or ${path}.domain.memory.guest should be provided`;

describe("memory must be asked for", () => {
  it("refuses a VM without memory with KubeVirt's message, naming the memory limit", async () => {
    const refused = await jsonRequest(cluster.emulator, "POST", vmsPath, vmAsking("no-memory-vm", undefined));
    expect(refused.status).toBe(422);
    expect(refused.json).toMatchObject({
      reason: "Invalid",
      message: `admission webhook "virtualmachine-validator.kubevirt.io" denied the request: ${missing("spec.template.spec")}`,
      details: {
        causes: [
          {
            reason: "FieldValueInvalid",
            message: missing("spec.template.spec"),
            field: "spec.template.spec.domain.resources.limits.memory",
          },
        ],
      },
    });
  });

  it("counts a zero quantity as none and any hugepages as memory", async () => {
    const zeroGuest = await jsonRequest(
      cluster.emulator,
      "POST",
      vmsPath,
      vmAsking("zero-vm", { guest: "0" }),
    );
    expect(zeroGuest.status).toBe(422);
    const zeroRequest = await jsonRequest(
      cluster.emulator,
      "POST",
      vmsPath,
      vmAsking("zero-request-vm", undefined, { requests: { memory: "0Gi" } }),
    );
    expect(zeroRequest.status).toBe(422);
    const hugepages = await jsonRequest(
      cluster.emulator,
      "POST",
      vmsPath,
      vmAsking("hugepages-vm", { hugepages: { pageSize: "2Mi" } }, { limits: { memory: "1Gi" } }),
    );
    expect(hugepages.status, hugepages.text).toBe(201);
    const limitOnly = await jsonRequest(
      cluster.emulator,
      "POST",
      vmsPath,
      vmAsking("limit-only-vm", undefined, { limits: { memory: "1Gi" } }),
    );
    expect(limitOnly.status, limitOnly.text).toBe(201);
  });

  it("refuses a VMI the same way, with its own paths", async () => {
    const vmi = {
      apiVersion: "kubevirt.io/v1",
      kind: "VirtualMachineInstance",
      metadata: { name: "no-memory-vmi" },
      spec: { domain: { devices: {} } },
    };
    const refused = await jsonRequest(cluster.emulator, "POST", vmisPath, vmi);
    expect(refused.status).toBe(422);
    expect(refused.json).toMatchObject({
      message: `admission webhook "virtualmachineinstances-create-validator.kubevirt.io" denied the request: ${missing("spec")}`,
      details: { causes: [{ field: "spec.domain.resources.limits.memory" }] },
    });
  });
});
