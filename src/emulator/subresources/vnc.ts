// `virtualmachineinstances/NAME/vnc`: the guest's screen over a websocket, as virt-api and
// virt-handler serve it in KubeVirt v1.9.0 (docs/vnc.md has the facts and their lines). The RFB bytes
// of QEMU's VNC server (on a unix socket, no authentication) go as binary frames both ways, text
// frames are dropped, no pings. One viewer per VMI: a new one cuts the viewer before it without a
// close frame (1006), before its own connection is made, unless it asks `preserveSession=true`, which
// virt-handler refuses with 503 while a viewer is connected, and virt-api passes on as a 500.
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { WebSocket, WebSocketServer } from "ws";
import type { Registry } from "../apiserver/registry.ts";
import { field, stringField } from "../cluster/objects.ts";
import type { GuestRuntime } from "../guests/guest-runtime.ts";
import { virtualMachineInstances } from "../cluster/resources.ts";
import type { ResourceRequestInfo } from "../http/request-info.ts";
import { badRequest, methodNotAllowed } from "../http/status.ts";
import type { UpgradeContext } from "../http/upgrade.ts";
import { kubevirtInternalError, targetVmi } from "./kubevirt-target.ts";
import { asBuffer, highWaterMark, lowWaterMark } from "./websocket.ts";

/** What virt-api makes of virt-handler's 503 (EnrichError over a text/plain body, then NewInternalError). */
export const activeVncRefusal =
  "Can't connect to websocket (503): websocket: bad handshake: application info: Active VNC connection. Request denied.";

/** strconv.ParseBool: anything else (a warning in virt-api's log) is false. */
function parseBool(value: string | null): boolean {
  return value !== null && ["1", "t", "T", "TRUE", "true", "True"].includes(value);
}

export class VncStreams {
  /** The connected viewer of each VMI, by uid. */
  private readonly open = new Map<string, WebSocket>();

  constructor(
    private readonly registry: Registry,
    private readonly guests: GuestRuntime,
    private readonly upgrader: WebSocketServer,
  ) {}

  /** virt-api's checks, virt-handler's session rule, then the handshake; errors before it are ApiErrors. */
  readonly handle = async (context: UpgradeContext): Promise<void> => {
    const vmi = targetVmi(this.registry, context.info);
    const uid = vmi.metadata.uid;
    if (field(vmi, "spec", "domain", "devices", "autoattachGraphicsDevice") === false) {
      throw badRequest("No graphics devices are present.");
    }
    if (stringField(vmi, "status", "phase") !== "Running") throw badRequest("VMI is not running");
    const query = new URL(context.request.url ?? "/", "https://emulator.invalid").searchParams;
    if (parseBool(query.get("preserveSession")) && this.open.has(uid)) {
      throw kubevirtInternalError(activeVncRefusal);
    }
    const guest = this.guests.find(uid);
    if (!guest?.screen) {
      throw kubevirtInternalError(
        `Can't connect to websocket (400): websocket: bad handshake: application info: no VNC socket for the VMI ${vmi.metadata.name} (the emulator's guests have no screen)`,
      );
    }
    // The viewer before is cut first, whether or not this one gets through.
    this.open.get(uid)?.terminate();
    const upstream = await guest.screen().catch((error: unknown) => {
      throw kubevirtInternalError(
        `Can't connect to websocket (400): websocket: bad handshake: ${String(error)}`,
      );
    });
    const { request, socket, head } = context;
    this.upgrader.handleUpgrade(request, socket, head, (ws) => this.stream(uid, upstream, ws));
  };

  private stream(vmiUid: string, upstream: Socket, ws: WebSocket): void {
    this.open.set(vmiUid, ws);
    upstream.on("data", (chunk: Buffer) => {
      ws.send(chunk, { binary: true }, () => {
        if (upstream.isPaused() && ws.bufferedAmount < lowWaterMark) upstream.resume();
      });
      if (ws.bufferedAmount > highWaterMark) upstream.pause();
    });
    // QEMU ended the connection, or the guest is gone: no close frame, as virt-handler.
    upstream.on("close", () => ws.terminate());
    upstream.on("error", () => upstream.destroy());
    ws.on("message", (data, isBinary) => {
      if (isBinary) upstream.write(asBuffer(data));
    });
    ws.on("error", () => ws.terminate());
    ws.on("close", () => {
      upstream.destroy();
      if (this.open.get(vmiUid) === ws) this.open.delete(vmiUid);
    });
  }
}

/**
 * `virtualmachineinstances/NAME/vnc/screenshot`: the screen as a PNG, which virt-handler takes with
 * libvirt's virDomainScreenshot, not through VNC. Whatever fails is a 500 with the reason as plain
 * text, the not-found and not-running checks included (httpGetRequestBinaryHandler in
 * pkg/virt-api/rest/subresource.go); `moveCursor` is read by no one.
 */
export async function serveScreenshot(
  registry: Registry,
  guests: GuestRuntime,
  method: string,
  response: ServerResponse,
  info: ResourceRequestInfo,
): Promise<void> {
  if (method !== "GET" && method !== "HEAD") throw methodNotAllowed();
  const failed = (reason: string) => {
    response.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" });
    response.end(reason);
  };
  const vmi = registry.find(virtualMachineInstances, info.namespace, info.name);
  if (!vmi) return failed(`virtualmachineinstance.kubevirt.io "${info.name}" not found`);
  if (field(vmi, "spec", "domain", "devices", "autoattachGraphicsDevice") === false) {
    return failed("No graphics devices are present.");
  }
  if (stringField(vmi, "status", "phase") !== "Running") return failed("VMI is not running");
  const guest = guests.find(vmi.metadata.uid);
  if (!guest?.screenshot)
    return failed("unexpected return code 400 (400 Bad Request), message: the VMI has no guest");
  let png: Buffer;
  try {
    png = await guest.screenshot();
  } catch (error) {
    return failed(`unexpected return code 500 (500 Internal Server Error), message: ${String(error)}`);
  }
  // virt-api writes only the bytes; Go's content sniffing names them.
  response.writeHead(200, { "Content-Type": "image/png", "Content-Length": png.length });
  response.end(method === "HEAD" ? undefined : png);
}
