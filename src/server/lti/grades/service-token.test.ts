// Service tokens signed by the console's key ring, against a small token endpoint of the test's own,
// which counts what it is asked, checks the assertion against the console's JWKS, and can forget the tokens it gave (as an LMS that
// revokes them early does).
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Platform } from "../model/model.ts";
import { LmsError, lmsRequest } from "./lms-http.ts";
import { scopes, ServiceTokens, TokenError } from "./service-token.ts";
import { serveToolKeys, type ServedToolKeys } from "./testing/served-tool-keys.ts";

let toolKeys: ServedToolKeys;
let dataDir: string;
let base: string;
const issued = new Set<string>();
let tokenRequests: URLSearchParams[] = [];
let expiresIn = 3600;
let refuseClients = false;

const server = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk: Buffer) => (body += chunk.toString()));
  request.on("end", () => {
    void (async () => {
      if (request.url === "/token") {
        const form = new URLSearchParams(body);
        tokenRequests.push(form);
        if (refuseClients) {
          response.writeHead(401, { "content-type": "application/json" });
          response.end('{"error":"invalid_client","error_description":"Unknown key id"}');
          return;
        }
        await jwtVerify(form.get("client_assertion") ?? "", createRemoteJWKSet(new URL(toolKeys.jwksUrl)), {
          issuer: "tool-client",
          subject: "tool-client",
          audience: `${base}/token`,
        });
        const token = randomUUID();
        issued.add(token);
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ access_token: token, token_type: "Bearer", expires_in: expiresIn }));
        return;
      }
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1] ?? "";
      response.writeHead(issued.has(token) ? 200 : 401).end(issued.has(token) ? "ok" : "invalid token");
    })().catch((error: unknown) => response.writeHead(400).end(String(error)));
  });
});

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "lti-service-token-"));
  toolKeys = await serveToolKeys(dataDir);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await toolKeys?.close();
  await rm(dataDir, { recursive: true, force: true });
});
beforeEach(() => {
  tokenRequests = [];
  issued.clear();
  expiresIn = 3600;
  refuseClients = false;
});

const platform = (): Platform => ({
  id: "lms",
  name: "The LMS",
  issuer: base,
  clientId: "tool-client",
  authLoginUrl: new URL(`${base}/auth`),
  tokenUrl: new URL(`${base}/token`),
  tokenAudience: undefined,
  jwksUrl: new URL(`${base}/jwks`),
  deploymentIds: ["1"],
  emailDomains: [],
  status: "active",
  source: "config",
});

const callResource = (token: string) =>
  lmsRequest({
    method: "GET",
    url: new URL(`${base}/resource`),
    headers: { authorization: `Bearer ${token}` },
    maxBytes: 1024,
    what: "the resource",
  });

describe("service tokens", () => {
  it("asks once for many callers at the same moment, and keeps the token per platform and scopes", async () => {
    const tokens = new ServiceTokens({ signer: toolKeys.signer });
    const many = await Promise.all(
      Array.from({ length: 10 }, () => tokens.token(platform(), [scopes.score, scopes.lineItem])),
    );
    expect(new Set(many).size).toBe(1);
    expect(await tokens.token(platform(), [scopes.lineItem, scopes.score])).toBe(many[0]);
    await tokens.token(platform(), [scopes.memberships]);
    expect(tokenRequests.map((form) => form.get("scope"))).toEqual([
      `${scopes.lineItem} ${scopes.score}`,
      scopes.memberships,
    ]);
    const [form] = tokenRequests;
    expect(form?.get("grant_type")).toBe("client_credentials");
    expect(form?.get("client_assertion_type")).toBe("urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
  });

  it("asks again shortly before the token expires", async () => {
    let now = Date.parse("2030-01-01T10:00:00Z");
    const tokens = new ServiceTokens({ signer: toolKeys.signer, now: () => now });
    expiresIn = 300;
    const first = await tokens.token(platform(), [scopes.score]);
    now += 239_000;
    expect(await tokens.token(platform(), [scopes.score])).toBe(first);
    now += 2_000;
    expect(await tokens.token(platform(), [scopes.score])).not.toBe(first);
    expect(tokenRequests).toHaveLength(2);
  });

  it("drops a token the LMS answers 401 to and tries once more with a fresh one", async () => {
    const tokens = new ServiceTokens({ signer: toolKeys.signer });
    const revoked = await tokens.token(platform(), [scopes.score]);
    issued.delete(revoked);
    const answer = await tokens.authorized(platform(), [scopes.score], undefined, callResource);
    expect(answer.text).toBe("ok");
    expect(tokenRequests).toHaveLength(2);
    // A second 401 is the LMS's answer, not a stale token's.
    const refusing = new ServiceTokens({ signer: toolKeys.signer });
    await expect(
      refusing.authorized(platform(), [scopes.score], undefined, () =>
        lmsRequest({
          method: "GET",
          url: new URL(`${base}/resource`),
          headers: { authorization: "Bearer never-issued" },
          maxBytes: 1024,
          what: "the resource",
        }),
      ),
    ).rejects.toMatchObject({ status: 401 });
  });

  it("says why the token endpoint refused the console, as a token error", async () => {
    refuseClients = true;
    const error = await new ServiceTokens({ signer: toolKeys.signer })
      .token(platform(), [scopes.score])
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(TokenError);
    expect(error).toBeInstanceOf(LmsError);
    expect((error as TokenError).message).toMatch(
      /refused a service token for The LMS \(HTTP 401\): Unknown key id$/,
    );
  });
});
