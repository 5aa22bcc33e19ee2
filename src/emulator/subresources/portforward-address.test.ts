// Port-forward to a VMI whose interface has no IP yet, over the wire: virt-api refuses only a VMI
// without any interface (400); with an interface but no IP it dials ":PORT", its own host, and answers
// the refused dial as a 500 (pkg/virt-api/rest/dialers.go).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vmManifest } from "../testing/manifests.ts";
import { jsonRequest, rawRequest } from "../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../testing/start.ts";
import { openStream, UpgradeRefused } from "../testing/websocket.ts";

const namespace = "lab-sessions";
const vmisPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances`;
const forward = (name: string, port: number) =>
  `/apis/subresources.kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/${name}/portforward/${port}`;

let cluster: TestEmulator;

beforeAll(async () => {
  cluster = await startTestEmulator();
  const created = await jsonRequest(
    cluster.emulator,
    "POST",
    `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`,
    vmManifest("no-ip-vm"),
  );
  expect(created.status, created.text).toBe(201);
  await eventually(
    async () => {
      const vmi = (await jsonRequest(cluster.emulator, "GET", `${vmisPath}/no-ip-vm`)).json as {
        status?: { phase?: string };
      };
      return vmi.status?.phase === "Running" ? true : undefined;
    },
    { what: "no-ip-vm to run" },
  );
});

afterAll(async () => {
  await cluster?.close();
});

/** The VMI's status.interfaces as virt-handler might report them (a VMI has no status subresource). */
async function reportInterfaces(interfaces: unknown[]): Promise<void> {
  const patched = await rawRequest(cluster.emulator, "PATCH", `${vmisPath}/no-ip-vm`, {
    contentType: "application/merge-patch+json",
    body: JSON.stringify({ status: { interfaces } }),
  });
  expect(patched.status, patched.text).toBe(200);
}

async function refusal(path: string): Promise<{ status: number; body: unknown }> {
  const error = await openStream(cluster.emulator, path).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(UpgradeRefused);
  const { status, body } = error as UpgradeRefused;
  return { status, body: JSON.parse(body) };
}

describe("port-forward to a VMI without an IP", () => {
  it("answers virt-api's refused dial of :PORT for an interface with no IP yet", async () => {
    for (const reported of [{ name: "default", ipAddress: "" }, { name: "default" }]) {
      await reportInterfaces([reported]);
      const message = "dialing VM: dial tcp :8080: connect: connection refused";
      expect(await refusal(forward("no-ip-vm", 8080))).toEqual({
        status: 500,
        body: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: `Internal error occurred: ${message}`,
          reason: "InternalError",
          details: { causes: [{ message }] },
          code: 500,
        },
      });
    }
  });

  it("answers 400 only when there is no interface at all", async () => {
    await reportInterfaces([]);
    expect(await refusal(forward("no-ip-vm", 8080))).toMatchObject({
      status: 400,
      body: { reason: "BadRequest", message: "no network interfaces are present", code: 400 },
    });
  });
});
