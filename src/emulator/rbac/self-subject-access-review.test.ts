import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { createRbacAuthorizer, parseRbacDocuments } from "./rbac.ts";
import { reviewSelfSubjectAccess } from "./self-subject-access-review.ts";
import { authenticatedUser } from "./users.ts";

const authorizer = createRbacAuthorizer(
  parseRbacDocuments(
    parseAllDocuments(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: console }
rules:
  - apiGroups: [subresources.kubevirt.io]
    resources: [virtualmachineinstances/console]
    verbs: [get]
  - nonResourceURLs: [/version]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: tara-console }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: console }
subjects: [{ kind: User, name: tara }]
`).map((document) => document.toJS() as unknown),
  ),
);
const tara = authenticatedUser("tara");

// What `kubectl auth can-i get virtualmachineinstances/console -n lab-sessions` would ask (with the group resolved).
const consoleSpec = {
  resourceAttributes: {
    namespace: "lab-sessions",
    verb: "get",
    group: "subresources.kubevirt.io",
    resource: "virtualmachineinstances",
    subresource: "console",
  },
};

describe("reviewSelfSubjectAccess", () => {
  it("answers yes with the reason the request would pass", () => {
    const body = {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: consoleSpec,
    };
    expect(reviewSelfSubjectAccess(authorizer, tara, body)).toEqual({
      review: {
        kind: "SelfSubjectAccessReview",
        apiVersion: "authorization.k8s.io/v1",
        metadata: { creationTimestamp: null },
        spec: consoleSpec,
        status: {
          allowed: true,
          reason:
            'RBAC: allowed by ClusterRoleBinding "tara-console" of ClusterRole "console" to User "tara"',
        },
      },
    });
  });

  it("answers a plain no for a request the same authorizer would refuse", () => {
    const spec = { resourceAttributes: { ...consoleSpec.resourceAttributes, subresource: "vnc" } };
    expect(reviewSelfSubjectAccess(authorizer, tara, { spec })).toMatchObject({
      review: { status: { allowed: false } },
    });
    const other = reviewSelfSubjectAccess(authorizer, authenticatedUser("alice"), { spec: consoleSpec });
    expect(other).toMatchObject({ review: { status: { allowed: false } } });
    expect("review" in other && other.review.status).toEqual({ allowed: false });
  });

  it("reviews non-resource paths", () => {
    const ask = (path: string) =>
      reviewSelfSubjectAccess(authorizer, tara, { spec: { nonResourceAttributes: { path, verb: "get" } } });
    expect(ask("/version")).toMatchObject({ review: { status: { allowed: true } } });
    expect(ask("/metrics")).toMatchObject({ review: { status: { allowed: false } } });
  });

  it("refuses a review that asks about nothing or about both kinds at once", () => {
    expect(reviewSelfSubjectAccess(authorizer, tara, { spec: {} })).toEqual({
      invalid:
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    });
    const both = { spec: { ...consoleSpec, nonResourceAttributes: { path: "/version", verb: "get" } } };
    expect(reviewSelfSubjectAccess(authorizer, tara, both)).toMatchObject({
      invalid: expect.stringContaining("cannot be specified in combination with resourceAttributes"),
    });
  });
});
