// Who the client is behind proxies, since anyone may write into X-Forwarded-For: TRUST_PROXY names how
// many proxies stand in front or which addresses they have, and the client is the right-most address
// no trusted proxy vouches for. Over real sockets: clients on their own loopback addresses, real proxies
// between them and the BFF, and what the BFF made of it read back from its audit log, its limiter and
// its cookies.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csrfHeader } from "../../common/api.ts";
import type { AuditEntry } from "../../common/operations-api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { loadConfig } from "../config.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { startForwardingProxy, type ForwardingProxy } from "../testing/forwarding-proxy.ts";
import { rawRequest } from "../testing/raw-http.ts";
import { startTestBff, type TestBff } from "../testing/test-bff.ts";

const client = "127.0.0.2";
const proxyAddress = "127.0.0.3";
const secondProxyAddress = "127.0.0.4";
const forged = "203.0.113.66";

/** TRUST_PROXY as an operator writes it, read by the console's own configuration. */
const trusting = (value: string) => loadConfig({ env: { TRUST_PROXY: value }, inCluster: false }).trustProxy;

let emulator: TestEmulator;
let oneHop: TestBff;
let oneHopProxy: ForwardingProxy;
let listed: TestBff;
let listedProxy: ForwardingProxy;
let twoHops: TestBff;
let twoListed: TestBff;
const proxies: ForwardingProxy[] = [];

async function proxyChain(bff: TestBff): Promise<ForwardingProxy> {
  // client -> outer (reaches the inner one from .4) -> inner (reaches the BFF from .3) -> BFF
  const inner = await startForwardingProxy(bff.url, { from: proxyAddress });
  const outer = await startForwardingProxy(inner.url, { from: secondProxyAddress });
  proxies.push(inner, outer);
  return outer;
}

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
  oneHop = await startTestBff({ labs: [aLab()], emulator, trustProxy: trusting("1") });
  oneHopProxy = await startForwardingProxy(oneHop.url, { from: proxyAddress });
  listed = await startTestBff({ labs: [aLab()], emulator, trustProxy: trusting(`${proxyAddress}/32`) });
  listedProxy = await startForwardingProxy(listed.url, { from: proxyAddress });
  twoHops = await startTestBff({ labs: [aLab()], emulator, trustProxy: trusting("2") });
  twoListed = await startTestBff({
    labs: [aLab()],
    emulator,
    trustProxy: trusting(`10.0.0.0/8, ${proxyAddress}, ${secondProxyAddress}`),
  });
});

afterAll(async () => {
  for (const proxy of [oneHopProxy, listedProxy, ...proxies]) await proxy?.close();
  for (const bff of [oneHop, listed, twoHops, twoListed]) await bff?.close();
  await emulator?.close();
});

function signIn(
  baseUrl: string,
  username: string,
  password: string,
  headers: Record<string, string> = {},
  from = client,
) {
  return rawRequest(baseUrl, {
    method: "POST",
    path: "/api/auth/login",
    from,
    headers: { [csrfHeader.name]: csrfHeader.value, ...headers },
    body: { username, password },
  });
}

/** The newest audit entry of `action` by `username`, as an instructor reads it. */
async function lastAudit(bff: TestBff, action: string, username: string): Promise<AuditEntry> {
  const ivan = await bff.signIn("ivan");
  const page = await ivan.get(`/api/audit?action=${action}&user=${username}&limit=1`);
  expect(page.status).toBe(200);
  return page.body.items[0] as AuditEntry;
}

describe("TRUST_PROXY=1: one proxy in front", () => {
  it("sees the address the proxy added, not the X-Forwarded-For the client forged", async () => {
    const answer = await signIn(oneHopProxy.url, "bob", "demo", { "x-forwarded-for": forged });
    expect(answer.status).toBe(200);
    expect((await lastAudit(oneHop, "sign-in", "bob")).ip).toBe(client);
    expect((await signIn(oneHopProxy.url, "bob", "wrong", { "x-forwarded-for": forged })).status).toBe(401);
    expect((await lastAudit(oneHop, "sign-in-failed", "bob")).ip).toBe(client);
    // Behind the proxy the browser used https: the cookie says Secure.
    expect(String(answer.headers["set-cookie"])).toMatch(/;\s*Secure/i);
  });

  it("limits sixty guesses that each claim another address", async () => {
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        signIn(oneHopProxy.url, "carol", `guess-${index}`, {
          "x-forwarded-for": `10.9.${index >> 8}.${index & 255}`,
        }).then((answer) => answer.status),
      ),
    );
    const count = (status: number) => statuses.filter((each) => each === status).length;
    expect(count(401)).toBeLessThanOrEqual(10);
    expect(count(429)).toBeGreaterThanOrEqual(50);
    expect(count(401) + count(429)).toBe(60);
  });
});

describe("two proxies in front", () => {
  for (const [setting, bff] of [
    ["TRUST_PROXY=2", () => twoHops],
    ["TRUST_PROXY=<both proxies' addresses>", () => twoListed],
  ] as const) {
    it(`${setting}: the client is the right-most address no trusted proxy vouches for`, async () => {
      const chain = await proxyChain(bff());
      // X-Forwarded-For arrives as "203.0.113.66, 127.0.0.2, 127.0.0.4" from 127.0.0.3.
      expect((await signIn(chain.url, "alice", "demo", { "x-forwarded-for": forged })).status).toBe(200);
      expect((await lastAudit(bff(), "sign-in", "alice")).ip).toBe(client);
    });
  }
});

describe("TRUST_PROXY=<addresses>", () => {
  it("believes the listed proxy: the client's address, https and the forwarded host", async () => {
    const answer = await signIn(listedProxy.url, "tara", "demo", { "x-forwarded-for": forged });
    expect(answer.status).toBe(200);
    expect(String(answer.headers["set-cookie"])).toMatch(/;\s*Secure/i);
    expect(answer.headers["strict-transport-security"]).toBe("max-age=31536000");
    expect((await lastAudit(listed, "sign-in", "tara")).ip).toBe(client);
    // From the listed address, a forwarded host that is not ours is believed, and refused.
    const rebound = await rawRequest(listed.url, {
      path: "/api/healthz",
      from: proxyAddress,
      headers: { "x-forwarded-host": "rebind.attacker.example" },
    });
    expect(rebound.status).toBe(421);
  });

  it("trusts a peer outside the list in nothing: not its X-Forwarded-For, -Proto or -Host", async () => {
    const direct = await signIn(
      listed.url,
      "alice",
      "demo",
      {
        "x-forwarded-for": forged,
        "x-forwarded-proto": "https",
        // Believed, this name would be refused (421): it is not one of ours.
        "x-forwarded-host": "rebind.attacker.example",
      },
      "127.0.0.5",
    );
    expect(direct.status).toBe(200);
    expect(String(direct.headers["set-cookie"])).not.toMatch(/;\s*Secure/i);
    expect(direct.headers["strict-transport-security"]).toBeUndefined();
    expect((await lastAudit(listed, "sign-in", "alice")).ip).toBe("127.0.0.5");
  });
});
