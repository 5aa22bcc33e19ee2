// Listening for the emulator's servers (its API server, the aggregated virt-api, the nodes' kubelet):
// the port they got (port 0 picks a free one), or the listen error (EADDRINUSE) as a rejection.
import type { Server } from "node:net";

export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address();
      resolveListen(typeof address === "object" && address ? address.port : port);
    });
  });
}
