// The permissions check: what it says of a missing, a dangerous and an unneeded permission.
import { describe, expect, it } from "vitest";
import { permissionsCheck } from "./permissions-check.ts";
import { forbiddenPermissions, requiredPermissions } from "./permissions.ts";
import { accessReviews, readings } from "./testing/cluster-readings.ts";

describe("the permissions check", () => {
  it("names each missing permission with what it is for", () => {
    const check = permissionsCheck(
      readings({
        required: accessReviews(
          requiredPermissions,
          (permission) =>
            !(
              "resource" in permission &&
              permission.resource === "virtualmachines" &&
              permission.verb === "patch"
            ),
        ),
      }),
    );
    expect(check.status).toBe("fail");
    expect(check.details).toEqual([
      "Missing: patch virtualmachines.kubevirt.io in lab-sessions (extending a session).",
    ]);
  });

  it("fails the websocket forms of exec and attach, and nodes/proxy with any verb cluster-wide", () => {
    const nodesProxy = forbiddenPermissions.filter(
      (permission) => permission.resource === "nodes" && permission.subresource === "proxy",
    );
    expect(nodesProxy.map((permission) => permission.verb)).toEqual([
      "get",
      "create",
      "update",
      "patch",
      "delete",
    ]);
    expect(new Set(nodesProxy.map((permission) => permission.scope))).toEqual(new Set(["cluster"]));
    const check = permissionsCheck(
      readings({
        forbidden: accessReviews(
          forbiddenPermissions,
          (permission) =>
            (permission.subresource === "attach" && permission.verb === "get") ||
            (permission.subresource === "proxy" && ["get", "create"].includes(permission.verb)),
        ),
      }),
    );
    expect(check.status).toBe("fail");
    expect(check.summary).toBe(
      "The console's credentials may attach to pods over a websocket in lab-sessions and reach the kubelets' API (nodes/proxy) cluster-wide: a path to root on the nodes.",
    );
    expect(check.details.map((line) => line.split(". ")[0])).toEqual([
      "Allowed but must not be: get pods/attach in lab-sessions",
      "Allowed but must not be: get nodes/proxy cluster-wide",
      "Allowed but must not be: create nodes/proxy cluster-wide",
    ]);
    expect(check.details[0]).toContain("Up to Kubernetes 1.34 a websocket attach is a GET");
  });

  it("warns about reading Secrets, which the console never needs", () => {
    const check = permissionsCheck(
      readings({
        forbidden: accessReviews(forbiddenPermissions, (permission) => permission.resource === "secrets"),
      }),
    );
    expect(check.status).toBe("warn");
    expect(check.details).toHaveLength(2);
  });
});
