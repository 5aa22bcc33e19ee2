// A reverse proxy in front of a test BFF, doing what an Ingress does: it appends the address of
// whoever connected to it to X-Forwarded-For (nginx's $proxy_add_x_forwarded_for, so a client's own
// X-Forwarded-For stays in front), says the client came over https to the host it named, and reaches
// the BFF from an address of its own.
import { createServer, request, type OutgoingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ForwardingProxy {
  url: string;
  close(): Promise<void>;
}

const hopByHop = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]);

export async function startForwardingProxy(
  target: string,
  /** The proxy's own address towards the BFF, e.g. 127.0.0.3. */
  options: { from: string },
): Promise<ForwardingProxy> {
  const upstream = new URL(target);
  const server = createServer((incoming, outgoing) => {
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(incoming.headers)) {
      if (!hopByHop.has(name) && value !== undefined) headers[name] = value;
    }
    const prior = [incoming.headers["x-forwarded-for"]].flat().filter((value) => value !== undefined);
    headers["x-forwarded-for"] = [...prior, incoming.socket.remoteAddress ?? ""].join(", ");
    headers["x-forwarded-proto"] = "https";
    headers["x-forwarded-host"] = incoming.headers.host ?? "";
    const forwarded = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers,
        localAddress: options.from,
        agent: false,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on("error", () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
