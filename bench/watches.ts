// `npm run bench:watches`: what keeping a quiet class of 300 sessions in view costs the API server per
// hour, the BFF's watch cache beside a bare loop that lists again whenever a watch ends (what the
// cache did before it resumed watches). Both follow the same VMs and VMIs of the same emulator at
// once, on a clock sped up `speedUp` times: the emulator ends every watch after 30 to 60 (sped-up)
// minutes with a bookmark first and sends a bookmark a (sped-up) minute, as the API server does.
import { createClusterClient, type WatchableResource } from "../src/server/kube/client.ts";
import { ObjectCache } from "../src/server/kube/object-cache.ts";
import { KubeRequestCounter } from "../src/server/kube/request-counter.ts";
import { sessionsSelector } from "../src/server/sessions/labels.ts";
import { buildSessionObjects } from "../src/server/sessions/vm-manifest.ts";
import { aLab } from "../src/server/sessions/testing/fixtures.ts";
import { startTestEmulator } from "../src/emulator/testing/start.ts";
import { jsonRequest } from "../src/emulator/testing/raw-request.ts";

const sessions = 300;
const speedUp = 360;
const hours = 3;
const namespace = "lab-sessions";
const minute = 60_000 / speedUp;

const emulator = await startTestEmulator({
  watchTiming: { bookmarkIntervalMs: minute, timeout: { minMs: 30 * minute, maxMs: 60 * minute } },
});
const lab = aLab();
for (let index = 0; index < sessions; index++) {
  const { virtualMachine } = buildSessionObjects({
    sessionId: `${lab.id}-${String(index).padStart(8, "0")}`,
    lab,
    owner: `student-${index}`,
    namespace,
    expiresAt: new Date(Date.now() + 86_400_000),
  });
  await jsonRequest(
    emulator.emulator,
    "POST",
    `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`,
    virtualMachine,
  );
}

function clientCounting(counter: KubeRequestCounter) {
  return createClusterClient(emulator.kubeConfig, { namespace, labelSelector: sessionsSelector, counter });
}

/** The bare loop: list, watch until the server ends it, list again. */
async function relistingLoop(resource: WatchableResource<unknown>, until: number, listBytes: number[]) {
  const signal = AbortSignal.timeout(until - Date.now());
  while (Date.now() < until) {
    try {
      const list = await resource.list(signal);
      listBytes.push(JSON.stringify(list.items).length);
      await new Promise<void>((resolve) => {
        resource
          .watch(
            list.resourceVersion,
            () => undefined,
            () => resolve(),
            signal,
          )
          .catch(() => resolve());
      });
    } catch {
      return;
    }
  }
}

const before = new KubeRequestCounter();
const after = new KubeRequestCounter();
const beforeClient = clientCounting(before);
const afterClient = clientCounting(after);
const caches = [afterClient.virtualMachines, afterClient.virtualMachineInstances].map(
  (resource, index) =>
    new ObjectCache<{ metadata?: { name?: string } }>(resource, {
      name: index === 0 ? "virtualmachines" : "virtualmachineinstances",
      log: { warn() {}, info() {} },
    }),
);
const listBytes: number[] = [];
const until = Date.now() + hours * 60 * minute;
console.log(`${sessions} sessions, ${hours} hours at ${speedUp}x (a watch lasts 30 to 60 minutes)...`);
for (const cache of caches) cache.start();
await Promise.all([
  relistingLoop(beforeClient.virtualMachines, until, listBytes),
  relistingLoop(beforeClient.virtualMachineInstances, until, listBytes),
]);
await Promise.all(caches.map((cache) => cache.stop()));
await emulator.close();

const perHour = (counter: KubeRequestCounter, verb: "list" | "watch") => counter.total(verb) / hours;
const averageList = listBytes.reduce((sum, bytes) => sum + bytes, 0) / Math.max(1, listBytes.length);
const rows = [
  ["lists again on every end", perHour(before, "list"), perHour(before, "watch")],
  ["resumes from the last version", perHour(after, "list"), perHour(after, "watch")],
] as const;
console.log("\nrequests per hour        lists   watches   listed MB");
for (const [name, lists, watches] of rows) {
  const megabytes = (lists * averageList) / 1e6;
  console.log(
    `${name.padEnd(30)} ${lists.toFixed(1).padStart(5)} ${watches.toFixed(1).padStart(9)} ${megabytes.toFixed(2).padStart(11)}`,
  );
}
const saved =
  perHour(before, "list") + perHour(before, "watch") - perHour(after, "list") - perHour(after, "watch");
console.log(
  `\nresuming saves ${saved.toFixed(1)} requests an hour, ${(((perHour(before, "list") - perHour(after, "list")) * averageList) / 1e6).toFixed(2)} MB of lists (one list of ${sessions} sessions: ${(averageList / 1e3).toFixed(0)} kB)`,
);
