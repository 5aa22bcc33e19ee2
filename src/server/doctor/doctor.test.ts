// The doctor against emulated clusters: a healthy one, the KubeVirt 1.9 + Kubernetes 1.34 ImageVolume
// trap of the field notes, one without KVM, and a console service account that was wrongly allowed to
// create pods. Always with the console's own credentials under deploy/base's RBAC.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import type { DoctorReport } from "../../common/operations-api.ts";
import { loadClusterConfig } from "../../emulator/cluster/cluster-config.ts";
import {
  deployBaseDir,
  startTestEmulator,
  type TestEmulator,
  type TestEmulatorOptions,
} from "../../emulator/testing/start.ts";
import { createClusterFacts } from "../kube/cluster-facts.ts";
import { KubeRequestCounter } from "../kube/request-counter.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { startTestBff } from "../testing/test-bff.ts";
import { runDoctor } from "./doctor.ts";

const imageVolumeTrapFile = fileURLToPath(
  new URL("../../../docs/examples/imagevolume-trap.cluster.yaml", import.meta.url),
);

const run = promisify(execFile);
const repository = path.resolve(import.meta.dirname, "../../..");
const emulators: TestEmulator[] = [];
const scratch = mkdtempSync(path.join(tmpdir(), "doctor-test-"));

afterAll(async () => {
  await Promise.all(emulators.map((emulator) => emulator.close()));
  rmSync(scratch, { recursive: true, force: true });
});

async function cluster(options: TestEmulatorOptions = {}): Promise<TestEmulator> {
  const emulator = await startTestEmulator({ deployRbac: true, ...options });
  emulators.push(emulator);
  return emulator;
}

async function doctorOn(emulator: TestEmulator): Promise<DoctorReport> {
  return runDoctor(createClusterFacts(emulator.bffKubeConfig(), new KubeRequestCounter()), {
    vmNamespace: "lab-sessions",
    leaseNamespace: "lab-console",
  });
}

function statuses(report: DoctorReport): Record<string, string> {
  return Object.fromEntries(report.checks.map((check) => [check.id, check.status]));
}

function check(report: DoctorReport, id: string) {
  const found = report.checks.find((entry) => entry.id === id);
  if (!found) throw new Error(`no check ${id}`);
  return found;
}

// The emulator's default cluster, the one `npm start` runs: KubeVirt's ImageVolume disabled, as the
// field fixed it.
const healthy = {};

describe("the doctor", () => {
  it("passes a healthy cluster, and the instructor page shows the same report", async () => {
    const emulator = await cluster({ cluster: healthy });
    const report = await doctorOn(emulator);
    expect(statuses(report)).toEqual({
      cluster: "ok",
      kubevirt: "ok",
      "image-volume": "ok",
      kvm: "ok",
      "vm-namespace": "ok",
      permissions: "ok",
      "cpu-allocation-ratio": "ok",
      "serial-console-log": "ok",
    });
    expect(report.status).toBe("ok");
    expect(check(report, "cluster").summary).toBe("Kubernetes v1.34.1 answers.");
    expect(check(report, "kvm").summary).toBe("3 of 3 node(s) expose devices.kubevirt.io/kvm.");
    expect(check(report, "image-volume").details[0]).toContain("disabledFeatureGates");
    expect(check(report, "cpu-allocation-ratio").details[0]).toContain("requests 200m CPU and 4380Mi memory");
    expect(check(report, "permissions").summary).toContain(
      "it cannot create, exec into or attach to pods in lab-sessions, nor reach the kubelets' API",
    );

    const bff = await startTestBff({ labs: [aLab()], emulator });
    try {
      const ta = await bff.signIn("tara");
      expect((await ta.get("/api/doctor")).status).toBe(403);
      const page = await (await bff.signIn("ivan")).get("/api/doctor");
      expect(page.status).toBe(200);
      // And what only the running console can tell: its warm VMs' claims and ready marks.
      expect(statuses(page.body)).toEqual({ ...statuses(report), "warm-patches": "ok" });
    } finally {
      await bff.close();
    }
  });

  it("fails the ImageVolume trap of KubeVirt 1.9 on Kubernetes 1.34, and npm run doctor exits 1", async () => {
    // The documented example file: KubeVirt's Beta default left on, Kubernetes 1.34's gate off.
    const emulator = await cluster({ cluster: loadClusterConfig(imageVolumeTrapFile) });
    const report = await doctorOn(emulator);
    const imageVolume = check(report, "image-volume");
    expect(imageVolume.status).toBe("fail");
    expect(imageVolume.summary).toBe(
      "KubeVirt mounts container disks as image volumes, but Kubernetes' ImageVolume gate is off: no VM will start.",
    );
    expect(imageVolume.details.join("\n")).toContain('kubernetes_feature_enabled{name="ImageVolume"} 0');
    expect(imageVolume.details.join("\n")).toContain('exec: "/container-disk-binary/usr/bin/container-disk"');
    expect(imageVolume.fix).toContain('"disabledFeatureGates":["ImageVolume"]');
    expect(report.status).toBe("fail");

    const kubeconfig = path.join(emulator.dir, "console.kubeconfig");
    writeFileSync(kubeconfig, emulator.bffKubeConfig().exportConfig());
    const cli = await run(
      process.execPath,
      ["--import", "tsx", "src/server/cli/doctor.ts", "--json", "--kubeconfig", kubeconfig],
      {
        cwd: repository,
      },
    ).then(
      () => ({ code: 0, stdout: "" }),
      (error: { code: number; stdout: string }) => error,
    );
    expect(cli.code).toBe(1);
    expect(statuses(JSON.parse(cli.stdout) as DoctorReport)["image-volume"]).toBe("fail");
  });

  it("fails a cluster whose nodes have no KVM", async () => {
    const emulator = await cluster({
      cluster: {
        ...healthy,
        nodes: [
          { name: "node01", kvm: false },
          { name: "node02", kvm: false },
        ],
      },
    });
    const kvm = check(await doctorOn(emulator), "kvm");
    expect(kvm.status).toBe("fail");
    expect(kvm.summary).toBe(
      "No node exposes devices.kubevirt.io/kvm: VMs can be created but never scheduled.",
    );
    expect(kvm.fix).toContain("virtualization");
  });

  it("fails when a Role lets the console create pods in the VM namespace", async () => {
    const extra = path.join(repository, "src/server/doctor/testing/pods-create-role.yaml");
    const emulator = await cluster({ cluster: healthy, rbacFiles: [deployBaseDir, extra] });
    const permissions = check(await doctorOn(emulator), "permissions");
    expect(permissions.status).toBe("fail");
    expect(permissions.summary).toBe(
      "The console's credentials may create pods in lab-sessions: a path to root on the nodes.",
    );
    expect(permissions.details).toEqual([
      "Allowed but must not be: create pods in lab-sessions. That namespace admits privileged pods, so whoever may create pods there can become root on the nodes.",
    ]);
  });

  it("fails when a Role grants get on pods/exec, all a websocket exec needs before Kubernetes 1.35", async () => {
    const extra = path.join(repository, "src/server/doctor/testing/pods-exec-get-role.yaml");
    const emulator = await cluster({ cluster: healthy, rbacFiles: [deployBaseDir, extra] });
    const permissions = check(await doctorOn(emulator), "permissions");
    expect(permissions.status).toBe("fail");
    expect(permissions.summary).toBe(
      "The console's credentials may exec into pods over a websocket in lab-sessions: a path to root on the nodes.",
    );
    expect(permissions.details).toHaveLength(1);
    expect(permissions.details[0]).toMatch(
      /^Allowed but must not be: get pods\/exec in lab-sessions\. That namespace admits privileged pods/,
    );
    expect(permissions.details[0]).toContain("kubernetes/kubernetes#78741");
    expect(permissions.details[0]).toContain("kubernetes/kubernetes#134577");
  });

  it("fails when a ClusterRole grants get on nodes/proxy: the kubelets' exec over a websocket", async () => {
    const extra = path.join(repository, "src/server/doctor/testing/nodes-proxy-get-clusterrole.yaml");
    const emulator = await cluster({ cluster: healthy, rbacFiles: [deployBaseDir, extra] });
    const permissions = check(await doctorOn(emulator), "permissions");
    expect(permissions.status).toBe("fail");
    expect(permissions.summary).toBe(
      "The console's credentials may reach the kubelets' API (nodes/proxy) cluster-wide: a path to root on the nodes.",
    );
    expect(permissions.details).toHaveLength(1);
    expect(permissions.details[0]).toMatch(/^Allowed but must not be: get nodes\/proxy cluster-wide\. /);
    expect(permissions.details[0]).toContain("kubernetes/kubernetes#136550");
    expect(permissions.fix).toContain("clusterrolebindings");
  });

  it("fails when the console may create its cloud-init Secrets but not delete them", async () => {
    // deploy/base as it was before: the Secrets rule without delete.
    const documents = parseAllDocuments(
      readFileSync(path.join(deployBaseDir, "rbac-sessions.yaml"), "utf8"),
    ).map((document) => document.toJS() as { rules?: { resources?: string[]; verbs: string[] }[] });
    for (const rule of documents.flatMap((document) => document.rules ?? [])) {
      if (rule.resources?.includes("secrets")) rule.verbs = rule.verbs.filter((verb) => verb !== "delete");
    }
    const createOnly = path.join(scratch, "rbac-sessions-create-only.yaml");
    writeFileSync(createOnly, documents.map((document) => stringify(document)).join("---\n"));
    const others = ["rbac-cluster.yaml", "rbac-leases.yaml"].map((file) => path.join(deployBaseDir, file));
    const emulator = await cluster({ cluster: healthy, rbacFiles: [createOnly, ...others] });
    const permissions = check(await doctorOn(emulator), "permissions");
    expect(permissions.status).toBe("fail");
    expect(permissions.details).toEqual([
      "Missing: delete secrets in lab-sessions (a warm VM's claim replaces its cloud-init with the session's, " +
        "and OwnerReferencesPermissionEnforcement (on in OpenShift and CIS-hardened clusters) needs delete on " +
        "a Secret to create it with an ownerReference).",
    ]);
  });

  it("fails when the console may not write NetworkPolicies, as RBAC from before lab egress", async () => {
    const documents = parseAllDocuments(
      readFileSync(path.join(deployBaseDir, "rbac-sessions.yaml"), "utf8"),
    ).map((document) => document.toJS() as { rules?: { resources?: string[] }[] });
    for (const document of documents) {
      if (document.rules)
        document.rules = document.rules.filter((rule) => !rule.resources?.includes("networkpolicies"));
    }
    const before = path.join(scratch, "rbac-sessions-before-egress.yaml");
    writeFileSync(before, documents.map((document) => stringify(document)).join("---\n"));
    const others = ["rbac-cluster.yaml", "rbac-leases.yaml"].map((file) => path.join(deployBaseDir, file));
    const emulator = await cluster({ cluster: healthy, rbacFiles: [before, ...others] });
    const permissions = check(await doctorOn(emulator), "permissions");
    expect(permissions.status).toBe("fail");
    expect(permissions.details).toEqual(
      ["list", "create", "patch", "delete"].map(
        (verb) =>
          `Missing: ${verb} networkpolicies.networking.k8s.io in lab-sessions (the network egress labs declare: one NetworkPolicy per lab).`,
      ),
    );
  });

  it("fails when the console may not keep leases, naming each missing permission and its namespace", async () => {
    const withoutLeases = ["rbac-sessions.yaml", "rbac-cluster.yaml"].map((file) =>
      path.join(deployBaseDir, file),
    );
    const emulator = await cluster({ cluster: healthy, rbacFiles: withoutLeases });
    const permissions = check(await doctorOn(emulator), "permissions");
    expect(permissions.status).toBe("fail");
    expect(permissions.summary).toBe("The console lacks 5 permission(s) it needs.");
    expect(permissions.details).toEqual(
      ["get", "list", "create", "update", "delete"].map(
        (verb) =>
          `Missing: ${verb} leases.coordination.k8s.io in lab-console (sharing the reaper, grading and consoles among replicas).`,
      ),
    );
    expect(permissions.fix).toContain("rbac-leases.yaml");
  });
});
