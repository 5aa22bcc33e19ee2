// DNS rebinding (security review H2): a page on a name the attacker points at 127.0.0.1 talks to a
// local BFF as its own origin. Only our own names may reach it: over real sockets, with the Host and
// Origin a rebound browser sends.
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csrfHeader } from "../../common/api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { startTestBff, type TestBff } from "../testing/test-bff.ts";

let emulator: TestEmulator;
let local: TestBff;
let deployed: TestBff;

interface RawAnswer {
  status: number;
  body: string;
}

/** One request with exactly these headers (fetch would not let a test choose the Host). */
function raw(
  bff: TestBff,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = "",
): Promise<RawAnswer> {
  const url = new URL(bff.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...headers, "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const signIn = (bff: TestBff, host: string, origin: string) =>
  raw(
    bff,
    "POST",
    "/api/auth/login",
    { host, origin, "content-type": "application/json", [csrfHeader.name]: csrfHeader.value },
    JSON.stringify({ username: "ivan", password: "demo" }),
  );

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
  local = await startTestBff({ labs: [aLab()], emulator });
  deployed = await startTestBff({
    labs: [aLab()],
    emulator,
    publicUrl: "https://lab.example.edu",
    trustProxy: { kind: "hops", hops: 1 },
  });
});

afterAll(async () => {
  await local?.close();
  await deployed?.close();
  await emulator?.close();
});

describe("a BFF on a laptop (no PUBLIC_URL)", () => {
  it("refuses a sign-in addressed to a rebound name, with the demo password right", async () => {
    const port = new URL(local.url).port;
    const rebound = await signIn(
      local,
      `rebind.attacker.example:${port}`,
      `http://rebind.attacker.example:${port}`,
    );
    expect(rebound.status).toBe(421);
    expect(JSON.parse(rebound.body).error.code).toBe("wrong_host");
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      expect((await signIn(local, host, `http://${host}`)).status).toBe(200);
    }
  });

  it("refuses a console socket and a health probe addressed to a rebound name", async () => {
    const port = new URL(local.url).port;
    const upgrade = await raw(local, "GET", "/api/sessions/linux-basics-aaaaaaaa/console", {
      host: `rebind.attacker.example:${port}`,
      origin: `http://rebind.attacker.example:${port}`,
      connection: "Upgrade",
      upgrade: "websocket",
      "sec-websocket-version": "13",
      "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    });
    expect(upgrade.status).toBe(421);
    expect(
      (await raw(local, "GET", "/api/healthz", { host: `rebind.attacker.example:${port}` })).status,
    ).toBe(421);
    // A kubelet probes by the pod's IP: an IP literal cannot be rebound.
    expect((await raw(local, "GET", "/api/healthz", { host: `10.1.2.3:${port}` })).status).toBe(200);
  });

  it("takes a mutation only from its own origin, never from another page that names the same host", async () => {
    const port = new URL(local.url).port;
    expect((await signIn(local, `127.0.0.1:${port}`, "http://evil.example")).status).toBe(403);
  });
});

describe("a deployed BFF (PUBLIC_URL, behind a trusted proxy)", () => {
  it("answers its public name, and refuses any other in Host or X-Forwarded-Host", async () => {
    expect((await signIn(deployed, "lab.example.edu", "https://lab.example.edu")).status).toBe(200);
    expect((await signIn(deployed, "other.example.edu", "https://other.example.edu")).status).toBe(421);
    const forwarded = await raw(deployed, "GET", "/api/healthz", {
      host: "lab.example.edu",
      "x-forwarded-host": "rebind.attacker.example",
    });
    expect(forwarded.status).toBe(421);
  });
});
