import { describe, expect, it } from "vitest";
import { collectionPath } from "./bff-account.ts";

describe("collectionPath", () => {
  it("puts core kinds under /api and grouped ones under /apis, namespaced where the manifest says", () => {
    expect(collectionPath({ apiVersion: "v1", kind: "Namespace", metadata: { name: "lab-sessions" } })).toBe(
      "/api/v1/namespaces",
    );
    expect(
      collectionPath({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "lab-console", namespace: "lab-console" },
      }),
    ).toBe("/api/v1/namespaces/lab-console/serviceaccounts");
    expect(
      collectionPath({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "r", namespace: "lab-sessions" },
      }),
    ).toBe("/apis/rbac.authorization.k8s.io/v1/namespaces/lab-sessions/roles");
    expect(
      collectionPath({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "c" },
      }),
    ).toBe("/apis/rbac.authorization.k8s.io/v1/clusterroles");
  });

  it("refuses a kind deploy/base's RBAC files do not hold", () => {
    expect(() =>
      collectionPath({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: "n" } }),
    ).toThrow(/Deployment/);
  });
});
