// Browser hardening headers (security review L3), on the answers of a real BFF.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { startTestBff, type TestBff } from "../testing/test-bff.ts";

let emulator: TestEmulator;
let local: TestBff;
let deployed: TestBff;

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
  local = await startTestBff({ labs: [aLab()], emulator });
  deployed = await startTestBff({ labs: [aLab()], emulator, trustProxy: { kind: "hops", hops: 1 } });
});

afterAll(async () => {
  await local?.close();
  await deployed?.close();
  await emulator?.close();
});

describe("browser hardening headers (security review L3)", () => {
  it("sends a CSP, COOP, Permissions-Policy and frame denial on every answer, HSTS only over TLS", async () => {
    const plain = await fetch(`${local.url}/api/healthz`);
    expect(plain.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(plain.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(plain.headers.get("cross-origin-opener-policy")).toBe("same-origin");
    expect(plain.headers.get("permissions-policy")).toContain("camera=()");
    expect(plain.headers.get("strict-transport-security")).toBeNull();
    const missing = await fetch(`${local.url}/api/nothing-here`);
    expect(missing.headers.get("content-security-policy")).not.toBeNull();
    const behindTls = await fetch(`${deployed.url}/api/healthz`, {
      headers: { "x-forwarded-proto": "https" },
    });
    expect(behindTls.headers.get("strict-transport-security")).toBe("max-age=31536000");
  });
});
