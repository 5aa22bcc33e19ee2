// The front-proxy authenticator on a real TLS server on port 0, with certificates made here: a
// requestheader CA and kube-apiserver's client certificate, and the ways a caller can fail to be it.
import { createServer, request, type Server } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCertificateAuthority, signCertificate, type CertificateAndKey } from "../cluster/tls.ts";
import { authenticateFrontProxy, type FrontProxyAuthentication } from "./front-proxy-authenticator.ts";
import type { RequestHeaderConfig } from "./requestheader-config.ts";

const frontProxyCa = createCertificateAuthority("front-proxy-ca");
const otherCa = createCertificateAuthority("some-other-ca");
const servingCa = createCertificateAuthority("serving-ca");
const serving = signCertificate(servingCa, { commonName: "virt-api", usage: { server: ["localhost"] } });
const frontProxyClient = signCertificate(frontProxyCa, { commonName: "front-proxy-client", usage: "client" });

const config: RequestHeaderConfig = {
  clientCaPem: frontProxyCa.certPem,
  allowedNames: ["front-proxy-client"],
  usernameHeaders: ["X-Remote-User"],
  groupHeaders: ["X-Remote-Group"],
  extraHeaderPrefixes: ["X-Remote-Extra-"],
};

const userHeaders = { "X-Remote-User": "alice", "X-Remote-Group": ["students", "system:authenticated"] };

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer(
    {
      key: serving.keyPem,
      cert: serving.certPem,
      ca: config.clientCaPem,
      requestCert: true,
      rejectUnauthorized: false,
    },
    (incoming, response) => {
      response.end(JSON.stringify(authenticateFrontProxy(incoming, config)));
    },
  );
  port = await new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function authenticate(
  client: CertificateAndKey | undefined,
  headers: Record<string, string | string[]>,
): Promise<FrontProxyAuthentication> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: "127.0.0.1",
        port,
        path: "/",
        servername: "localhost",
        ca: servingCa.certPem,
        ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
        headers,
        agent: false,
      },
      (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => (text += chunk.toString()));
        response.on("end", () => resolve(JSON.parse(text) as FrontProxyAuthentication));
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("authenticateFrontProxy", () => {
  it("takes the user, every group and the extras from the headers of the front proxy's connection", async () => {
    const result = await authenticate(frontProxyClient, {
      ...userHeaders,
      "X-Remote-Extra-Authentication.kubernetes.io%2fcredential-id": "JTI=1",
      "X-Remote-Extra-Scopes": ["a", "b"],
    });
    expect(result).toEqual({
      user: {
        username: "alice",
        groups: ["students", "system:authenticated"],
        extra: { "authentication.kubernetes.io/credential-id": ["JTI=1"], scopes: ["a", "b"] },
      },
    });
  });

  it("refuses a request without a client certificate, whatever its headers say", async () => {
    expect(await authenticate(undefined, userHeaders)).toEqual({ refusal: "request is not authenticated" });
  });

  it("refuses a certificate another CA signed", async () => {
    const impostor = signCertificate(otherCa, { commonName: "front-proxy-client", usage: "client" });
    const result = await authenticate(impostor, userHeaders);
    expect(result).toEqual({ refusal: expect.stringContaining("not signed by the requestheader client CA") });
  });

  it("refuses the requestheader CA's certificate for a name not allowed", async () => {
    const stranger = signCertificate(frontProxyCa, { commonName: "someone-else", usage: "client" });
    const result = await authenticate(stranger, userHeaders);
    expect(result).toEqual({ refusal: expect.stringContaining(`"someone-else" is not one of`) });
  });

  it("needs both the user and the group header, as virt-api does", async () => {
    expect(await authenticate(frontProxyClient, { "X-Remote-Group": "students" })).toEqual({
      refusal: "a valid user header is required for authorization",
    });
    expect(await authenticate(frontProxyClient, { "X-Remote-User": "alice" })).toEqual({
      refusal: "a valid group header is required for authorization",
    });
  });
});
