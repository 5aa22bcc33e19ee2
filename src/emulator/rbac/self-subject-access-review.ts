// POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews (what `kubectl auth can-i` sends): the
// same authorizer that guards requests answers for the caller, so "yes" means the request would pass.
import { z } from "zod";
import type { Authorizer, RequestAttributes, UserInfo } from "./attributes.ts";

const resourceAttributesSchema = z.looseObject({
  namespace: z.string().optional(),
  verb: z.string().optional(),
  group: z.string().optional(),
  version: z.string().optional(),
  resource: z.string().optional(),
  subresource: z.string().optional(),
  name: z.string().optional(),
});
const nonResourceAttributesSchema = z.looseObject({
  path: z.string().optional(),
  verb: z.string().optional(),
});
const reviewSchema = z.looseObject({
  spec: z
    .looseObject({
      resourceAttributes: resourceAttributesSchema.nullish(),
      nonResourceAttributes: nonResourceAttributesSchema.nullish(),
    })
    .optional(),
});

export type SelfSubjectAccessReviewOutcome =
  /** 201 with this body. */
  | { review: Record<string, unknown> }
  /** 422 Invalid with this message. */
  | { invalid: string };

export function reviewSelfSubjectAccess(
  authorizer: Authorizer,
  user: UserInfo,
  body: unknown,
): SelfSubjectAccessReviewOutcome {
  const parsed = reviewSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { invalid: invalidMessage(`${issue?.path.join(".")}: Invalid value: ${issue?.message}`) };
  }
  const spec = parsed.data.spec ?? {};
  const { resourceAttributes, nonResourceAttributes } = spec;
  // ValidateSelfSubjectAccessReviewSpec's wording (Go prints the offending struct; JSON stands in for it).
  if (resourceAttributes && nonResourceAttributes) {
    return {
      invalid: invalidMessage(
        `spec.nonResourceAttributes: Invalid value: ${JSON.stringify(JSON.stringify(nonResourceAttributes))}: ` +
          "cannot be specified in combination with resourceAttributes",
      ),
    };
  }
  let attributes: RequestAttributes;
  if (resourceAttributes) {
    attributes = {
      kind: "resource",
      verb: resourceAttributes.verb ?? "",
      apiGroup: resourceAttributes.group ?? "",
      resource: resourceAttributes.resource ?? "",
      subresource: resourceAttributes.subresource ?? "",
      namespace: resourceAttributes.namespace ?? "",
      name: resourceAttributes.name ?? "",
    };
  } else if (nonResourceAttributes) {
    attributes = {
      kind: "nonResource",
      verb: nonResourceAttributes.verb ?? "",
      path: nonResourceAttributes.path ?? "",
    };
  } else {
    return {
      invalid: invalidMessage(
        'spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ),
    };
  }
  const decision = authorizer.authorize(user, attributes);
  return {
    review: {
      kind: "SelfSubjectAccessReview",
      apiVersion: "authorization.k8s.io/v1",
      metadata: { creationTimestamp: null },
      spec,
      // `denied` stays out: RBAC never denies outright, it only has no opinion.
      status:
        decision.reason === ""
          ? { allowed: decision.allowed }
          : { allowed: decision.allowed, reason: decision.reason },
    },
  };
}

function invalidMessage(cause: string): string {
  return `SelfSubjectAccessReview.authorization.k8s.io "" is invalid: ${cause}`;
}
