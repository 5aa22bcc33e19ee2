// The console's own key ring (tool-keys.ts) on a launch store in the test's data folder, with its
// JWKS served on loopback as GET /api/lti/jwks serves it: what a platform fetches to check the
// console's client assertions.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { SqliteLtiLaunchStore } from "../../launch/store/sqlite-launch-store.ts";
import { createToolKeyRing, type ToolKeyRing } from "../../launch/tool-keys.ts";

export interface ServedToolKeys {
  signer: ToolKeyRing;
  jwksUrl: string;
  close(): Promise<void>;
}

export async function serveToolKeys(dataDir: string): Promise<ServedToolKeys> {
  const store = SqliteLtiLaunchStore.open(dataDir);
  const signer = createToolKeyRing({ store, secret: "a-test-session-secret-long-enough", now: Date.now });
  const server = createServer((_request, response) => {
    signer.jwks().then(
      (jwks) => response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwks)),
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    signer,
    jwksUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/lti/jwks`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}
