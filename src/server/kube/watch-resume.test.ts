// The BFF's watch cache against the emulator's API server, which ends every watch after a random
// time as a real one does after 30 to 60 minutes (here one to one and a half seconds), with a
// bookmark just before: the cache watches again from where it was, listing once in all; only a
// resourceVersion the server no longer keeps (410 Gone) makes it list again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../common/testing/patience.ts";
import { vmManifest } from "../../emulator/testing/manifests.ts";
import { jsonRequest } from "../../emulator/testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { createClusterClient } from "./client.ts";
import { ObjectCache } from "./object-cache.ts";
import { KubeRequestCounter } from "./request-counter.ts";
import type { VirtualMachine } from "./types.ts";

const namespace = "lab-sessions";
const labels = { "app.kubernetes.io/managed-by": "lab-console" };

let emulator: TestEmulator;
let cache: ObjectCache<VirtualMachine>;
const counter = new KubeRequestCounter();

beforeAll(async () => {
  emulator = await startTestEmulator({ watchTiming: { timeout: { minMs: 1_000, maxMs: 1_500 } } });
  const client = createClusterClient(emulator.kubeConfig, {
    namespace,
    labelSelector: "app.kubernetes.io/managed-by=lab-console",
    counter,
  });
  cache = new ObjectCache(client.virtualMachines, {
    name: "virtualmachines",
    log: { warn() {}, info() {} },
  });
  cache.start();
  await waitFor(() => cache.synced, "the first list");
});

afterAll(async () => {
  await cache?.stop();
  await emulator?.close();
});

const succeeded = (verb: "list" | "watch") =>
  counter
    .snapshot()
    .filter((entry) => entry.verb === verb && entry.code === 200)
    .reduce((sum, entry) => sum + entry.count, 0);

const createVm = (name: string) =>
  jsonRequest(
    emulator.emulator,
    "POST",
    `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`,
    vmManifest(name, { labels }),
  );

describe("a watch the API server ends", () => {
  it("is watched again from where it was, with every change in between, and no list", async () => {
    await waitFor(() => cache.restarts >= 3, "three watches ended by the server", 15_000);
    await createVm("made-later");
    await waitFor(() => cache.get("made-later") !== undefined, "the change");
    expect(succeeded("list")).toBe(1);
    expect(succeeded("watch")).toBeGreaterThanOrEqual(4);
    expect(cache.stale).toBe(false);
  });

  it("lists again only when the version it resumes from has expired (410)", async () => {
    const lists = succeeded("list");
    // A change the cache does not watch moves the server's version on; then the server forgets its
    // history and ends the watch without the bookmark a timeout sends, so the version the cache
    // resumes from is gone: its next watch gets 410.
    await jsonRequest(
      emulator.emulator,
      "POST",
      `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`,
      vmManifest("not-ours"),
    );
    emulator.emulator.faults.compactHistory();
    emulator.emulator.faults.endWatches();
    await waitFor(() => succeeded("list") === lists + 1, "a list after the 410", 15_000);
    await createVm("made-after-the-list");
    await waitFor(() => cache.get("made-after-the-list") !== undefined, "the VM in the view");
    expect(cache.stale).toBe(false);
  });
});
