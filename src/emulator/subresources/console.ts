// `virtualmachineinstances/NAME/console`: the guest's serial line over a websocket, as virt-api and
// virt-handler serve it. Raw bytes in binary frames both ways, text frames ignored, no pings, nothing
// replayed. One connection per VMI: a new one takes the line and the older socket is cut without a
// close frame (its client sees 1006), which is also what happens when the guest goes away.
import type { WebSocket, WebSocketServer } from "ws";
import type { Registry } from "../apiserver/registry.ts";
import { field, stringField } from "../cluster/objects.ts";
import type { GuestRuntime, RunningGuest } from "../guests/guest-runtime.ts";
import { badRequest } from "../http/status.ts";
import type { UpgradeContext } from "../http/upgrade.ts";
import { kubevirtInternalError, targetVmi, vmiConflict } from "./kubevirt-target.ts";
import { asBuffer, highWaterMark, lowWaterMark } from "./websocket.ts";

export class ConsoleStreams {
  /** The connected console of each VMI, by uid. */
  private readonly open = new Map<string, WebSocket>();

  constructor(
    private readonly registry: Registry,
    private readonly guests: GuestRuntime,
    private readonly upgrader: WebSocketServer,
  ) {}

  /** validateVMIForConsole, then the handshake; errors before it are thrown as ApiErrors. */
  readonly handle = (context: UpgradeContext): void => {
    const vmi = targetVmi(this.registry, context.info);
    const name = vmi.metadata.name;
    if (field(vmi, "spec", "domain", "devices", "autoattachSerialConsole") === false) {
      throw badRequest("No serial consoles are present.");
    }
    const phase = stringField(vmi, "status", "phase");
    if (phase === "Failed") throw vmiConflict(name, "VMI is in failed status");
    if (phase !== "Running") throw badRequest("VMI is not running");
    const guest = this.guests.find(vmi.metadata.uid);
    if (!guest) {
      throw kubevirtInternalError(
        `dialing virt-handler: the VMI ${name} has no guest (the emulator runs without guests)`,
      );
    }
    const { request, socket, head } = context;
    this.upgrader.handleUpgrade(request, socket, head, (ws) => this.stream(vmi.metadata.uid, guest, ws));
  };

  /** Cuts the console connection of a VMI as a network failure would (1006); false when there is none. */
  cut(vmiUid: string): boolean {
    const ws = this.open.get(vmiUid);
    ws?.terminate();
    return ws !== undefined;
  }

  private stream(vmiUid: string, guest: RunningGuest, ws: WebSocket): void {
    this.open.set(vmiUid, ws);
    let paused = false;
    const attachment = guest.attach({
      onData: (chunk) => {
        ws.send(chunk, { binary: true }, () => {
          if (paused && ws.bufferedAmount < lowWaterMark) {
            paused = false;
            attachment.resume();
          }
        });
        if (!paused && ws.bufferedAmount > highWaterMark) {
          paused = true;
          attachment.pause();
        }
      },
      // Replaced by a newer connection, or the guest stopped: virt-handler closes the stream's
      // sockets without a close frame.
      onClose: () => ws.terminate(),
    });
    ws.on("message", (data, isBinary) => {
      if (isBinary) attachment.write(asBuffer(data));
    });
    ws.on("error", () => ws.terminate());
    ws.on("close", () => {
      attachment.detach();
      if (this.open.get(vmiUid) === ws) this.open.delete(vmiUid);
    });
  }
}
