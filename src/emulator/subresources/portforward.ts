// `virtualmachineinstances|virtualmachines/NAME/portforward/PORT[/PROTOCOL]`: one websocket per
// forwarded connection, raw bytes in binary frames, as virt-api's NewWebsocketStreamer serves it. virt-api
// dials the VMI's IP before it upgrades (so a refused port is a 500 `dialing VM: ...`), pings the
// client every second and drops it when no pong came for a minute; data frames do not count. When
// either side ends, both sockets are closed without a close frame.
import net from "node:net";
import type { WebSocket, WebSocketServer } from "ws";
import type { GuestRuntime } from "../guests/guest-runtime.ts";
import { badRequest, pathNotFound } from "../http/status.ts";
import type { UpgradeContext } from "../http/upgrade.ts";
import { field, stringField, type KubeObject } from "../cluster/objects.ts";
import { findCondition } from "../controller/kubevirt-state.ts";
import type { Registry } from "../apiserver/registry.ts";
import { kubevirtInternalError, targetVmi, vmiConflict } from "./kubevirt-target.ts";
import { asBuffer, highWaterMark, lowWaterMark } from "./websocket.ts";

export interface PortForwardKeepAlive {
  /** virt-api: 1 s. */
  pingIntervalMs: number;
  /** Dropped when no pong arrived for this long; virt-api: 60 s. */
  timeoutMs: number;
}

export const kubevirtKeepAlive: PortForwardKeepAlive = { pingIntervalMs: 1000, timeoutMs: 60_000 };
// gorilla's WriteControl(PingMessage, []byte("keep alive"), ...) in keepAliveClientStream.
const pingPayload = Buffer.from("keep alive");

/**
 * getTargetInterfaceIP (pkg/virt-api/rest/dialers.go): the first interface's IP, "" when it has none
 * yet; only a VMI without any interface is refused.
 */
function targetInterfaceIp(vmi: KubeObject): string {
  const interfaces = field(vmi, "status", "interfaces");
  if (!Array.isArray(interfaces) || interfaces.length === 0) {
    throw badRequest("no network interfaces are present");
  }
  return stringField(interfaces[0], "ipAddress") ?? "";
}

export class PortForwards {
  constructor(
    private readonly registry: Registry,
    private readonly guests: GuestRuntime,
    private readonly upgrader: WebSocketServer,
    private readonly keepAlive: PortForwardKeepAlive,
  ) {}

  readonly handle = async (context: UpgradeContext): Promise<void> => {
    const vmi = targetVmi(this.registry, context.info);
    if (findCondition(vmi, "Paused")) throw vmiConflict(vmi.metadata.name, "VMI is paused");
    const ip = targetInterfaceIp(vmi);
    const [port = "", protocol = "tcp", ...extra] = context.info.rest;
    if (extra.length > 0) throw pathNotFound();
    if (port === "") throw badRequest("port must not be empty");
    const target = await this.dial(vmi, ip, port, protocol);
    const { request, socket, head } = context;
    if (socket.destroyed) {
      target.destroy();
      return;
    }
    this.upgrader.handleUpgrade(request, socket, head, (ws) => this.pipe(ws, target));
  };

  /** Connects to the port inside the guest, with Go's net.Dial wording for what goes wrong. */
  private async dial(vmi: KubeObject, ip: string, port: string, protocol: string): Promise<net.Socket> {
    const dialFailed = (detail: string) => kubevirtInternalError(`dialing VM: ${detail}`);
    if (protocol !== "tcp" && protocol !== "udp")
      throw dialFailed(`dial ${protocol}: unknown network ${protocol}`);
    if (!/^\d+$/.test(port)) throw dialFailed(`dial ${protocol}: lookup ${protocol}/${port}: unknown port`);
    const number = Number(port);
    if (number > 65535) throw dialFailed(`dial ${protocol}: address ${port}: invalid port`);
    const address = net.isIPv6(ip) ? `[${ip}]:${port}` : `${ip}:${port}`;
    if (protocol === "udp") {
      throw dialFailed(`dial udp ${address}: the emulator forwards TCP only`);
    }
    const guest = this.guests.find(vmi.metadata.uid);
    const refused = dialFailed(`dial tcp ${address}: connect: connection refused`);
    // No IP yet: virt-api dials ":PORT", its own host, where nothing of the guest's listens. Answered
    // as that refused dial, without dialing the emulator's own host.
    if (ip === "" || !guest || number === 0) throw refused;
    try {
      return await guest.connect(number);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ECONNREFUSED" || code === "EGUESTSTOPPED") throw refused;
      if (code === "ETIMEDOUT") throw dialFailed(`dial tcp ${address}: i/o timeout`);
      throw dialFailed(`dial tcp ${address}: ${(error as Error).message}`);
    }
  }

  private pipe(ws: WebSocket, target: net.Socket): void {
    let unsent = 0;
    let targetEnded = false;
    const finish = () => {
      clearInterval(pinger);
      clearTimeout(deadline);
      ws.terminate();
      target.destroy();
    };
    const pinger = setInterval(() => ws.ping(pingPayload), this.keepAlive.pingIntervalMs);
    let deadline = setTimeout(finish, this.keepAlive.timeoutMs);
    ws.on("pong", () => {
      clearTimeout(deadline);
      deadline = setTimeout(finish, this.keepAlive.timeoutMs);
    });

    target.on("data", (chunk: Buffer) => {
      unsent += 1;
      ws.send(chunk, { binary: true }, () => {
        unsent -= 1;
        if (target.isPaused() && ws.bufferedAmount < lowWaterMark) target.resume();
        // What the guest sent before it closed still reaches the client.
        if (targetEnded && unsent === 0) finish();
      });
      if (ws.bufferedAmount > highWaterMark) target.pause();
    });
    const targetDone = () => {
      targetEnded = true;
      if (unsent === 0) finish();
    };
    target.on("end", targetDone);
    target.on("close", targetDone);
    target.on("error", finish);
    target.on("drain", () => ws.resume());

    ws.on("message", (data, isBinary) => {
      if (isBinary && !target.write(asBuffer(data))) ws.pause();
    });
    ws.on("error", finish);
    ws.on("close", finish);
  }
}
