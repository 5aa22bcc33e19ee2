// What KubeVirt and the node do, whoever holds the objects: the garbage collector, virt-controller's
// VM and VMI loops, the guests (the node's QEMU), and virt-api's streams and pauses over them. The
// emulator's own API server (emulator.ts) and the mode beside a real one (beside-apiserver.ts) both
// start these on a registry and put their own front door before the streams.
import { dirname, join, resolve } from "node:path";
import type { Registry } from "./apiserver/registry.ts";
import { kubernetesFeatureGates, type ClusterConfig } from "./cluster/cluster-config.ts";
import type { Timings } from "./cluster/timing.ts";
import { EventRecorder } from "./controller/events.ts";
import { startGarbageCollector } from "./controller/garbage-collector.ts";
import { VmController } from "./controller/vm-controller.ts";
import { VmiLifecycle } from "./controller/vmi-lifecycle.ts";
import { noGuests, type GuestRuntime } from "./guests/guest-runtime.ts";
import { createQemuGuests } from "./guests/qemu/qemu-guests.ts";
import { createSandboxGuests, type SecretPlace } from "./guests/sandbox/sandbox-guests.ts";
import { UpgradeRoutes } from "./http/upgrade.ts";
import { ConsoleStreams } from "./subresources/console.ts";
import { VmiPauses } from "./subresources/pause.ts";
import { kubevirtKeepAlive, PortForwards, type PortForwardKeepAlive } from "./subresources/portforward.ts";
import { VncStreams } from "./subresources/vnc.ts";
import { createKubevirtUpgrader } from "./subresources/websocket.ts";

export type GuestsChoice = "sandbox" | "qemu" | "none" | GuestRuntime;

export interface KubevirtNodeOptions {
  registry: Registry;
  config: ClusterConfig;
  timings: Timings;
  stateDir: string;
  guests: GuestsChoice;
  unlimitedGuests: boolean;
  /** Folders holding secrets a sandboxed guest must not see (the kubeconfigs' among them). */
  kubeconfigPaths: string[];
  portForwardKeepAlive?: PortForwardKeepAlive;
}

export interface KubevirtNode {
  guests: GuestRuntime;
  consoles: ConsoleStreams;
  pauses: VmiPauses;
  /** console, portforward and vnc websockets by subresource. */
  upgrades: UpgradeRoutes;
  stop(): Promise<void>;
}

/** The emulator's folders with secrets in them (its CA key and tokens; with npm start, DATA_DIR's). */
function secretPlacesOf(options: KubevirtNodeOptions): SecretPlace[] {
  return [
    { what: "the emulator's state directory", path: options.stateDir },
    ...options.kubeconfigPaths.map((path) => ({
      what: "the folder of the kubeconfig",
      path: dirname(resolve(path)),
    })),
  ];
}

async function guestRuntimeFor(options: KubevirtNodeOptions): Promise<GuestRuntime> {
  const { guests, registry, stateDir, config } = options;
  if (guests === "none") return noGuests;
  if (guests === "qemu") {
    return createQemuGuests({ registry, stateDir, log: (line) => console.log(`emulator: ${line}`) });
  }
  if (guests === "sandbox") {
    return createSandboxGuests({
      registry,
      guestsDir: join(stateDir, "guests"),
      timings: options.timings,
      images: config.images,
      limits: config.guestLimits,
      acceptUnlimited: options.unlimitedGuests,
      secretPlaces: secretPlacesOf(options),
    });
  }
  return guests;
}

export async function startKubevirtNode(options: KubevirtNodeOptions): Promise<KubevirtNode> {
  const { registry, config, timings } = options;
  // The guests first: nothing else has started if they cannot.
  const guests = await guestRuntimeFor(options);
  const recorder = new EventRecorder(registry);
  const stopGarbageCollector = startGarbageCollector(registry);
  const vmController = new VmController(registry, recorder, timings.backoffSecond);
  const lifecycle = new VmiLifecycle(registry, recorder, {
    timings,
    guests,
    kubevirtVersion: config.kubevirt.version,
    apiServerImageVolumes: kubernetesFeatureGates(config).some(
      (gate) => gate.name === "ImageVolume" && gate.enabled,
    ),
  });

  const upgrader = createKubevirtUpgrader();
  const consoles = new ConsoleStreams(registry, guests, upgrader);
  const portForwards = new PortForwards(
    registry,
    guests,
    upgrader,
    options.portForwardKeepAlive ?? kubevirtKeepAlive,
  );
  const upgrades = new UpgradeRoutes();
  upgrades.register("virtualmachineinstances/console", consoles.handle);
  upgrades.register("virtualmachineinstances/portforward", portForwards.handle);
  upgrades.register("virtualmachines/portforward", portForwards.handle);
  upgrades.register("virtualmachineinstances/vnc", new VncStreams(registry, guests, upgrader).handle);
  const pauses = new VmiPauses({ registry, guests, recorder, conditionLagMs: timings.toPausedCondition });

  return {
    guests,
    consoles,
    pauses,
    upgrades,
    async stop() {
      pauses.close();
      lifecycle.stop();
      vmController.stop();
      stopGarbageCollector();
      await guests.close();
    },
  };
}
