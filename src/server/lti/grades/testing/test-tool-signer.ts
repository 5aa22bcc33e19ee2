// A ToolSigner for tests: one RS256 key, its public half served as a JWKS on loopback, which is all
// of the tool a platform fetches to check a client assertion. (The console's own key ring, with
// rotation, is tool-keys.ts.)
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import type { ToolSigner } from "../../model.ts";

export interface TestToolSigner extends ToolSigner {
  jwksUrl: string;
  close(): Promise<void>;
}

export async function startTestToolSigner(): Promise<TestToolSigner> {
  const kid = randomUUID();
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" }] });
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" }).end(jwks);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    jwksUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    sign: (payload) =>
      new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid, typ: "JWT" }).sign(privateKey),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
