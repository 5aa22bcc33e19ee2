// The websocket side of KubeVirt's streams, as client-go's NewUpgrader sets gorilla up: any Origin,
// the subprotocol `plain.kubevirt.io` chosen when offered (none otherwise), no compression, and text
// frames skipped unread (binaryReader), so they need not be valid UTF-8 either.
import { WebSocketServer, type RawData } from "ws";

export const plainStreamProtocol = "plain.kubevirt.io";

export function createKubevirtUpgrader(): WebSocketServer {
  return new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    skipUTF8Validation: true,
    handleProtocols: (offered) => (offered.has(plainStreamProtocol) ? plainStreamProtocol : false),
  });
}

export function asBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** Above this many bytes queued towards a client, stop reading the source until it drains. */
export const highWaterMark = 256 * 1024;
export const lowWaterMark = 64 * 1024;
