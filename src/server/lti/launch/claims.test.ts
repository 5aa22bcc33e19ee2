// The service URLs a launch's claims name: the console sends its bearer tokens there.
import { describe, expect, it } from "vitest";
import { claimNames, LaunchClaims } from "./claims.ts";

function claims(services: { lineitems?: string; lineitem?: string; memberships?: string }) {
  return {
    sub: "u-1",
    [claimNames.messageType]: "LtiResourceLinkRequest",
    [claimNames.version]: "1.3.0",
    [claimNames.deploymentId]: "d-1",
    [claimNames.targetLinkUri]: "https://console.example/api/lti/launch",
    [claimNames.roles]: [],
    [claimNames.resourceLink]: { id: "link-1" },
    [claimNames.context]: { id: "course-1" },
    [claimNames.ags]: { scope: [], lineitems: services.lineitems, lineitem: services.lineitem },
    ...(services.memberships === undefined
      ? {}
      : { [claimNames.nrps]: { context_memberships_url: services.memberships } }),
  };
}

describe("a launch's service URLs", () => {
  it("are taken over https, and over plain http only on this machine", () => {
    const parsed = LaunchClaims.parse(
      claims({
        lineitems: "https://lms.example/courses/1/lineitems",
        lineitem: "http://127.0.0.1:8080/courses/1/lineitems/2",
        memberships: "http://localhost:8080/courses/1/memberships",
      }),
    );
    expect(parsed[claimNames.ags]?.lineitems?.href).toBe("https://lms.example/courses/1/lineitems");
    expect(parsed[claimNames.ags]?.lineitem?.href).toBe("http://127.0.0.1:8080/courses/1/lineitems/2");
    expect(parsed[claimNames.nrps]?.context_memberships_url.href).toBe(
      "http://localhost:8080/courses/1/memberships",
    );
  });

  it.each([
    ["lineitems", { lineitems: "http://lms.example/courses/1/lineitems" }],
    ["lineitem", { lineitem: "http://lms.example/courses/1/lineitems/2" }],
    ["context_memberships_url", { memberships: "http://lms.example/courses/1/memberships" }],
    ["lineitem", { lineitem: "ftp://lms.example/courses/1/lineitems/2" }],
  ])("refuse %s elsewhere over anything but https", (field, services) => {
    const parsed = LaunchClaims.safeParse(claims(services));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.at(-1))).toEqual([field]);
  });
});
