// deploy/components/replicas as `kubectl kustomize` builds it on top of deploy/base: what several
// replicas need (docs/scaling.md) is there, and the single replica's volume is gone.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

const deployDir = fileURLToPath(new URL("../../../deploy", import.meta.url));

interface Built {
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
}

async function buildWithComponent(): Promise<Built[]> {
  const dir = await mkdtemp(path.join(tmpdir(), "replicas-component-"));
  try {
    // kustomize takes relative paths only.
    const relative = (to: string) => path.relative(dir, path.join(deployDir, to));
    await writeFile(
      path.join(dir, "kustomization.yaml"),
      [
        "apiVersion: kustomize.config.k8s.io/v1beta1",
        "kind: Kustomization",
        `resources: [${relative("base")}]`,
        `components: [${relative("components/replicas")}]`,
      ].join("\n"),
    );
    const { stdout } = await promisify(execFile)("kubectl", ["kustomize", dir], { timeout: 20_000 });
    return parseAllDocuments(stdout).map((document) => document.toJSON() as Built);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("deploy/components/replicas", () => {
  it("runs two replicas on PostgreSQL with shared secrets, the pod IP, and the lease RBAC", async () => {
    const objects = await buildWithComponent();
    const deployment = objects.find((object) => object.kind === "Deployment") as unknown as {
      spec: {
        replicas: number;
        strategy: unknown;
        template: {
          spec: {
            containers: { env: { name: string; valueFrom?: unknown }[] }[];
            volumes: { name: string }[];
          };
        };
      };
    };
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.strategy).toEqual({
      type: "RollingUpdate",
      rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
    });
    const env = new Map(
      deployment.spec.template.spec.containers[0]!.env.map((each) => [each.name, each.valueFrom]),
    );
    for (const [name, key] of [
      ["DATABASE_URL", "database-url"],
      ["SESSION_SECRET", "session-secret"],
      ["AGENT_TOKEN_SECRET", "agent-token-secret"],
    ]) {
      expect(env.get(name!)).toEqual({ secretKeyRef: { name: "lab-console-secrets", key } });
    }
    expect(env.get("POD_IP")).toEqual({ fieldRef: { fieldPath: "status.podIP" } });
    expect(deployment.spec.template.spec.volumes.find((volume) => volume.name === "data")).toEqual({
      name: "data",
      emptyDir: { sizeLimit: "256Mi" },
    });
    expect(objects.some((object) => object.kind === "PersistentVolumeClaim")).toBe(false);
    expect(objects.find((object) => object.kind === "PodDisruptionBudget")?.spec).toMatchObject({
      minAvailable: 1,
    });
    expect(
      objects.some((object) => object.kind === "Role" && object.metadata.name === "lab-console-leases"),
    ).toBe(true);
  });
});
