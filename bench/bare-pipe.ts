// The floor the BFF's console relay is compared with (bench/console.ts): a process started as the
// BFF is (forkBff, tsx), with a plain `ws` server. For each client it opens the same console
// subresource upstream as the BFF (openBenchConsole: TLS, `perMessageDeflate: false`), then forwards
// each upstream binary message as one downstream binary frame, and keystrokes the other way. There is
// no parsing, no coalescing, no flow control, no screen copy and no recording: what relaying alone
// costs in Node.
//   client: ws://127.0.0.1:PORT/VMI-NAME (a VMI in the bench's namespace). The upgrade is answered
//   once the upstream is open, so keystrokes sent on "open" reach the VM.
//   parent -> child: "cpu" (support/cpu-ipc.ts, as console-bff.ts answers it), "upstreams" (how many
//   upstream sockets are not closed yet) or "stop".
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import WebSocket, { WebSocketServer } from "ws";
import { loadKubeConfig } from "../src/server/kube/client.ts";
import { openBenchConsole } from "./support/bench-cluster.ts";
import { answeredCpu, type CpuMessage } from "./support/cpu-ipc.ts";

export type BarePipeMessage =
  { type: "ready"; url: string } | { type: "upstreams"; open: number } | CpuMessage;

const send = (message: BarePipeMessage) => process.send?.(message);

const kubeconfigPath = process.env.LAB_KUBECONFIG;
if (!kubeconfigPath) throw new Error("bare-pipe.ts needs LAB_KUBECONFIG (forkBff sets it)");
const kubeConfig = loadKubeConfig({ kind: "kubeconfig", path: kubeconfigPath });

let openUpstreams = 0;
const downstream = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: false });
const server = createServer((_request, response) => response.writeHead(404).end());

server.on("upgrade", (request, socket, head) => {
  const vmiName = decodeURIComponent((request.url ?? "/").slice(1));
  openBenchConsole(kubeConfig, vmiName).then(
    (upstream) => {
      openUpstreams += 1;
      upstream.once("close", () => (openUpstreams -= 1));
      if (socket.destroyed) {
        upstream.close();
        return;
      }
      downstream.handleUpgrade(request, socket, head, (client) => pipe(upstream, client));
    },
    (error: Error) => {
      socket.end(`HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n${error.message}`);
    },
  );
});

function pipe(upstream: WebSocket, client: WebSocket): void {
  upstream.on("message", (data: Buffer, isBinary) => {
    if (isBinary) client.send(data, { binary: true });
  });
  client.on("message", (data: Buffer, isBinary) => {
    if (isBinary) upstream.send(data, { binary: true });
  });
  // Either end closing closes the other. The emulator cuts a console replaced by a newer connection
  // without a close frame, as KubeVirt does.
  upstream.on("close", () => client.close());
  client.on("close", () => upstream.close());
  upstream.on("error", () => upstream.terminate());
  client.on("error", () => client.terminate());
}

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  send({ type: "ready", url: `ws://127.0.0.1:${port}` });
});

process.on("message", (message) => {
  if (answeredCpu(message)) return;
  if (message === "upstreams") {
    send({ type: "upstreams", open: openUpstreams });
  } else if (message === "stop") {
    process.exit(0);
  }
});
