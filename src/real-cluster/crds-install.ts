// KubeVirt's CRDs (src/emulator/apiserver/openapi/crds.ts) installed into a real API server, and
// waited for until it serves their kinds.
import type { KubeConfig } from "@kubernetes/client-node";
import { eventually } from "../common/testing/patience.ts";
import { kubevirtCustomResourceDefinitions } from "../emulator/apiserver/openapi/crds.ts";
import { apiRequest, createObject } from "./api-requests.ts";

const crdsPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

interface Condition {
  type?: string;
  status?: string;
}

/** Creates the CRDs and resolves with their names once each is Established. */
export async function installKubevirtCrds(admin: KubeConfig): Promise<string[]> {
  const crds = kubevirtCustomResourceDefinitions();
  for (const crd of crds) await createObject(admin, crdsPath, crd, `CRD ${crd.metadata.name}`);
  for (const crd of crds) await untilEstablished(admin, crd.metadata.name);
  return crds.map((crd) => crd.metadata.name);
}

/** Established: the API server serves the kind (discovery and REST). */
async function untilEstablished(admin: KubeConfig, name: string): Promise<void> {
  const established = async () => {
    const { text } = await apiRequest(admin, "GET", `${crdsPath}/${name}`);
    const crd = JSON.parse(text) as { status?: { conditions?: Condition[] } };
    return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ?? false;
  };
  await eventually(
    () => established().catch(() => false),
    (yes) => yes,
    { timeoutMs: 60_000, what: `CRD ${name} to be established` },
  );
}
