// Browser hardening headers (security review L3), on the answers of a real BFF.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { startTestBff, type TestBff } from "../testing/test-bff.ts";

let emulator: TestEmulator;
let local: TestBff;
let deployed: TestBff;
let webRoot: string;

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
  webRoot = await mkdtemp(path.join(tmpdir(), "headers-web-"));
  await writeFile(path.join(webRoot, "index.html"), "<!doctype html><title>Lab Console</title>");
  local = await startTestBff({ labs: [aLab()], emulator, webRoot });
  deployed = await startTestBff({ labs: [aLab()], emulator, trustProxy: { kind: "hops", hops: 1 } });
});

afterAll(async () => {
  await local?.close();
  await deployed?.close();
  await emulator?.close();
  if (webRoot) await rm(webRoot, { recursive: true, force: true });
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

  it("lets an LMS frame the deep-link picker's page, and no other page of the console", async () => {
    const requestId = "a".repeat(43);
    const picker = await fetch(`${local.url}/lti/deep-links/${requestId}`, {
      headers: { "sec-fetch-dest": "iframe" },
    });
    expect(picker.status).toBe(200);
    expect(picker.headers.get("content-type")).toContain("text/html");
    const pickerPolicy = picker.headers.get("content-security-policy");
    expect(pickerPolicy).toContain("frame-ancestors *");
    expect(pickerPolicy).not.toContain("frame-ancestors 'none'");
    // Framed, and as strict as every other page in all else.
    expect(pickerPolicy).toContain("script-src 'self'");
    expect(pickerPolicy).toContain("form-action 'self'");
    expect(picker.headers.get("x-frame-options")).toBeNull();

    for (const other of [
      "/",
      "/lti",
      "/lti/deep-links",
      `/lti/deep-links/${requestId}/more`,
      "/grading/lab-one",
      "/index.html",
      `/api/lti/deep-links/${requestId}`,
    ]) {
      const answer = await fetch(`${local.url}${other}`, { headers: { "sec-fetch-dest": "iframe" } });
      expect({ other, policy: answer.headers.get("content-security-policy") }).toEqual({
        other,
        policy: expect.stringContaining("frame-ancestors 'none'"),
      });
      expect(answer.headers.get("x-frame-options")).toBe("DENY");
    }
  });
});
