import { describe, expect, it } from "vitest";
import { replicaEndpoint, replicaIdentity } from "./identity.ts";
import { replicaLeaseName } from "./membership.ts";

describe("replica identity and endpoint", () => {
  it("names a replica after its pod, new on every start, usable in a lease name", () => {
    const first = replicaIdentity("lab-console-7c9f8d6b5-x2kqp");
    expect(first).toMatch(/^lab-console-7c9f8d6b5-x2kqp-[0-9a-f]{6}$/);
    expect(replicaIdentity("lab-console-7c9f8d6b5-x2kqp")).not.toBe(first);
    const odd = replicaIdentity("Some_Host.example.ORG-with-a-very-long-name-indeed-longer-than-forty");
    expect(replicaLeaseName(odd)).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(replicaLeaseName(odd).length).toBeLessThanOrEqual(63);
  });

  it("is reached at the pod's IP, else where it listens, never at loopback when listening on all", () => {
    expect(replicaEndpoint("10.244.1.7", "0.0.0.0", 8080)).toBe("http://10.244.1.7:8080");
    expect(replicaEndpoint("fd00::7", "::", 8080)).toBe("http://[fd00::7]:8080");
    expect(replicaEndpoint(undefined, "127.0.0.1", 18080)).toBe("http://127.0.0.1:18080");
    expect(replicaEndpoint(undefined, "0.0.0.0", 8080)).toMatch(/^http:\/\/\d+\.\d+\.\d+\.\d+:8080$/);
  });
});
