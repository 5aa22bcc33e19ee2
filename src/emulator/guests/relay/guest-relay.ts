// A guest's port relay (port-relay.ts) over the guest's life: started in the guest's network
// namespace once its first process is known, the way port-forward reaches the guest's ports while it
// runs, and stopped when the guest ends, which its files wait for (the relay's socket is among them).
import { open, type FileHandle } from "node:fs/promises";
import type net from "node:net";
import { PortRelay } from "./port-relay.ts";
import { runsPrivileged } from "../isolation/sandbox.ts";
import { isRunning, type ProcessIdentity } from "../isolation/sandbox-process.ts";

const connectTimeoutMs = 10_000;

export class GuestRelay {
  private readonly relay: PortRelay;
  private stopping: Promise<void> = Promise.resolve();

  constructor(
    private readonly guestName: string,
    private readonly socketPath: string,
  ) {
    this.relay = new PortRelay(guestName);
  }

  /**
   * Starts the relay in the network namespace of `init`, unless the guest has ended meanwhile. The
   * relay gets the namespace as a descriptor, opened while the first process is known to still be the
   * guest's: a pid that has ended may already be another process's.
   */
  async start(init: ProcessIdentity | undefined, guestRunning: () => boolean): Promise<void> {
    if (!init) return this.relay.failToStart("the guest's first process was not found");
    let namespace: FileHandle | undefined;
    try {
      namespace = await open(`/proc/${init.pid}/ns/net`, "r");
      if (!guestRunning() || !(await isRunning(init))) return;
      this.relay.start({
        networkNamespaceFd: namespace.fd,
        socketPath: this.socketPath,
        privileged: runsPrivileged(),
      });
    } catch (error) {
      this.relay.failToStart((error as Error).message);
    } finally {
      await namespace?.close();
    }
  }

  /** A TCP connection to `port` on the guest's loopback. */
  connect(port: number): Promise<net.Socket> {
    return this.relay.connect(port, connectTimeoutMs);
  }

  /** Stops the relay; connections waiting for it, and later ones, fail with `error`. */
  stop(error: Error): void {
    this.stopping = this.relay
      .stop(error)
      .catch((failure: unknown) =>
        console.error(`emulator: guest ${this.guestName}: stopping its port relay:`, failure),
      );
  }

  /** Resolves once a stop has finished (at once if none was asked for). */
  get stopped(): Promise<void> {
    return this.stopping;
  }
}
