// kubectl (v1.32, the real binary) against the emulator: apply, get, get -w, describe, delete,
// explain and auth can-i, all over the kubeconfig the emulator writes.
import { execFile, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { vmManifest } from "../testing/manifests.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../testing/start.ts";

const execFileAsync = promisify(execFile);
let cluster: TestEmulator;

function kubectlArgs(args: string[]): string[] {
  return [
    "--kubeconfig",
    cluster.emulator.kubeconfigPath,
    "--cache-dir",
    join(cluster.dir, "kube-cache"),
    ...args,
  ];
}

async function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return execFileAsync("kubectl", kubectlArgs(args), { timeout: 20_000 });
}

/** Runs kubectl expecting it to fail; returns what it printed. */
async function kubectlFails(...args: string[]): Promise<string> {
  try {
    await kubectl(...args);
  } catch (error) {
    const failure = error as { stdout: string; stderr: string };
    return `${failure.stdout}${failure.stderr}`;
  }
  throw new Error(`kubectl ${args.join(" ")} succeeded unexpectedly`);
}

function writeManifest(name: string, manifest: unknown): string {
  const path = join(cluster.dir, `${name}.yaml`);
  writeFileSync(path, stringify(manifest));
  return path;
}

beforeAll(async () => {
  cluster = await startTestEmulator({
    authorizer: {
      authorize: (user, attributes) => ({
        allowed: user.username !== "student" || attributes.verb !== "delete",
        reason: "",
      }),
    },
    tokens: [{ token: "student-token", username: "student", groups: [] }],
  });
});

afterAll(async () => {
  await cluster.close();
});

describe("kubectl", () => {
  it("applies a VM manifest, shows KubeVirt's columns and re-applies with a merge patch", async () => {
    const path = writeManifest("apply-vm", vmManifest("apply-vm"));
    expect((await kubectl("apply", "-f", path)).stdout).toBe("virtualmachine.kubevirt.io/apply-vm created\n");
    const vmTable = await eventually(
      async () => {
        const { stdout } = await kubectl("get", "vm", "-n", "lab-sessions", "apply-vm");
        return /apply-vm\s+\S+\s+Running\s+True/.test(stdout) ? stdout : undefined;
      },
      { what: "kubectl get vm to show Running" },
    );
    expect(vmTable.split("\n")[0]).toMatch(/^NAME\s+AGE\s+STATUS\s+READY$/);
    const vmiTable = (await kubectl("get", "vmi", "-A")).stdout;
    expect(vmiTable.split("\n")[0]).toMatch(/^NAMESPACE\s+NAME\s+AGE\s+PHASE\s+IP\s+NODENAME\s+READY$/);
    expect(vmiTable).toMatch(/lab-sessions\s+apply-vm\s+\S+\s+Running\s+10\.244\.\d+\.\d+\s+node0\d\s+True/);

    const changed = vmManifest("apply-vm", { labels: { app: "lab", course: "linux" } });
    expect((await kubectl("apply", "-f", writeManifest("apply-vm", changed))).stdout).toBe(
      "virtualmachine.kubevirt.io/apply-vm configured\n",
    );
    expect(
      (
        await kubectl(
          "get",
          "vm",
          "-n",
          "lab-sessions",
          "apply-vm",
          "-o",
          "jsonpath={.metadata.labels.course}",
        )
      ).stdout,
    ).toBe("linux");
    expect((await kubectl("apply", "-f", writeManifest("apply-vm", changed))).stdout).toBe(
      "virtualmachine.kubevirt.io/apply-vm unchanged\n",
    );
  });

  it("refuses unknown fields on apply (kubectl asks for strict field validation)", async () => {
    const manifest = vmManifest("strict-vm");
    (manifest.spec as Record<string, unknown>).colour = "blue";
    const output = await kubectlFails("apply", "-f", writeManifest("strict-vm", manifest));
    expect(output).toContain('strict decoding error: unknown field "spec.colour"');
  });

  it("streams changes with get -w", async () => {
    await kubectl(
      "apply",
      "-f",
      writeManifest(
        "watched-vm",
        vmManifest("watched-vm", { runStrategy: "Halted", labels: { "watch-test": "w1" } }),
      ),
    );
    await eventually(async () => {
      const { stdout } = await kubectl(
        "get",
        "vm",
        "-n",
        "lab-sessions",
        "watched-vm",
        "-o",
        "jsonpath={.status.printableStatus}",
      );
      return stdout === "Stopped" ? true : undefined;
    });
    const watcher = spawn(
      "kubectl",
      kubectlArgs(["get", "vm", "-n", "lab-sessions", "-w", "-l", "watch-test=w1"]),
    );
    let output = "";
    watcher.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    try {
      await eventually(() => (/watched-vm\s+\S+\s+Stopped/.test(output) ? true : undefined), {
        what: "get -w to list the VM",
      });
      await kubectl(
        "patch",
        "vm",
        "-n",
        "lab-sessions",
        "watched-vm",
        "--type",
        "merge",
        "-p",
        '{"spec":{"runStrategy":"Always"}}',
      );
      await eventually(() => (/watched-vm\s+\S+\s+Running\s+True/.test(output) ? true : undefined), {
        what: "get -w to print the VM Running",
      });
      expect(output).toMatch(/watched-vm\s+\S+\s+Starting/);
    } finally {
      watcher.kill();
    }
  });

  it("describes a VM with its events and deletes it, waiting until it is gone", async () => {
    await kubectl("apply", "-f", writeManifest("described-vm", vmManifest("described-vm")));
    await eventually(async () => {
      const { stdout } = await kubectl(
        "get",
        "vm",
        "-n",
        "lab-sessions",
        "described-vm",
        "-o",
        "jsonpath={.status.printableStatus}",
      );
      return stdout === "Running" ? true : undefined;
    });
    const description = (await kubectl("describe", "vm", "-n", "lab-sessions", "described-vm")).stdout;
    expect(description).toMatch(/Printable Status:\s+Running/);
    expect(description).toMatch(
      /Normal\s+SuccessfulCreate\s+\S+\s+virtualmachine-controller\s+Started the virtual machine/,
    );
    expect((await kubectl("delete", "vm", "-n", "lab-sessions", "described-vm")).stdout).toBe(
      'virtualmachine.kubevirt.io "described-vm" deleted\n',
    );
    const missing = await kubectlFails("get", "vm", "-n", "lab-sessions", "described-vm");
    expect(missing).toContain(
      'Error from server (NotFound): virtualmachines.kubevirt.io "described-vm" not found',
    );
    expect(
      (await kubectl("get", "vmi,pods", "-n", "lab-sessions", "-l", "labconsole.dev/session=described-vm"))
        .stderr,
    ).toContain("No resources found");
  });

  it("explains KubeVirt fields from the OpenAPI schema", async () => {
    const { stdout } = await kubectl("explain", "vm.spec.runStrategy");
    expect(stdout).toContain("KIND:       VirtualMachine");
    expect(stdout).toContain("FIELD: runStrategy <string>");
  });

  it("creates namespaces and secrets with kubectl create, which sends protobuf", async () => {
    expect((await kubectl("create", "namespace", "course-b")).stdout).toBe("namespace/course-b created\n");
    await kubectl("create", "secret", "generic", "greeting", "-n", "course-b", "--from-literal=hello=world");
    const data = (
      await kubectl("get", "secret", "greeting", "-n", "course-b", "-o", "jsonpath={.data.hello}")
    ).stdout;
    expect(Buffer.from(data, "base64").toString()).toBe("world");
    expect(
      (await kubectl("get", "namespace", "course-b", "-o", "jsonpath={.metadata.labels}")).stdout,
    ).toContain('"kubernetes.io/metadata.name":"course-b"');
  });

  it("answers auth can-i for another user's token", async () => {
    expect(
      (await kubectl("auth", "can-i", "list", "vms", "-n", "lab-sessions", "--token", "student-token"))
        .stdout,
    ).toBe("yes\n");
    expect(
      await kubectlFails("auth", "can-i", "delete", "vms", "-n", "lab-sessions", "--token", "student-token"),
    ).toBe("no\n");
  });
});
