// Whether the real API server lets an aggregated request's user do it: one SubjectAccessReview per
// request, as virt-api asks (KubeVirt v1.9.0 pkg/virt-api/rest/authorizer.go generateAccessReview,
// Authorize). The attributes come from the path as virt-api reads it: /apis/GROUP/VERSION/namespaces/
// NS/RESOURCE/NAME/SUBRESOURCE..., resource virtualmachines or virtualmachineinstances only, the
// subresource everything after the name ("vnc/screenshot") except portforward, whose port and protocol
// are not for RBAC; or /apis/GROUP/VERSION/namespaces/NS/expand-vm-spec. The verb is the HTTP method's
// (a websocket's GET is "get", a PUT "update"). A path of any other shape is refused, as virt-api does.
import type { AggregatedUser } from "./front-proxy-authenticator.ts";
import { statusMessage, type KubeRequest } from "../remote/remote-api.ts";

export interface ResourceAttributes {
  namespace: string;
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  name?: string;
}

export type AccessDecision = { allowed: true } | { allowed: false; reason: string };

const reviewPath = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

function verbOf(method: string, name: string): string | undefined {
  switch (method.toUpperCase()) {
    case "POST":
      return "create";
    case "GET":
    case "HEAD":
      return name === "" ? "list" : "get";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return name === "" ? "deletecollection" : "delete";
    default:
      return undefined;
  }
}

/** The attributes virt-api reviews for a request, or why it cannot build them. */
export function resourceAttributesOf(method: string, path: string): ResourceAttributes | { invalid: string } {
  // Segments as Go's strings.Split gives them: ["", "apis", group, version, "namespaces", ns, ...].
  const segments = path.split("/");
  const [, , group = "", version = "", , namespace = "", resource = "", name = ""] = segments;
  if (segments.length >= 9) {
    if (resource !== "virtualmachineinstances" && resource !== "virtualmachines") {
      return { invalid: `unknown resource type ${resource}` };
    }
    const verb = verbOf(method, name);
    if (verb === undefined) return { invalid: `unknown http verb in request: ${method}` };
    const subresource = segments[8] === "portforward" ? "portforward" : segments.slice(8).join("/");
    return { namespace, verb, group, version, resource, subresource, name };
  }
  if (segments.length === 7) {
    if (resource !== "expand-vm-spec") return { invalid: `unknown resource type ${resource}` };
    const verb = verbOf(method, "");
    if (verb === undefined) return { invalid: `unknown http verb in request: ${method}` };
    return { namespace, verb, group, version, resource };
  }
  return { invalid: `unknown api endpoint: ${path}` };
}

/**
 * Asks the real API server. A refusal to review (the server down, or this server's account not
 * allowed to create SubjectAccessReviews) rejects: virt-api answers that with a 500, not a denial.
 */
export async function reviewAccess(
  request: KubeRequest,
  user: AggregatedUser,
  method: string,
  path: string,
): Promise<AccessDecision> {
  const attributes = resourceAttributesOf(method, path);
  if ("invalid" in attributes) return { allowed: false, reason: attributes.invalid };
  const answer = await request("POST", reviewPath, {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: { user: user.username, groups: user.groups, extra: user.extra, resourceAttributes: attributes },
  });
  if (answer.status !== 201 && answer.status !== 200) {
    throw new Error(`SubjectAccessReview refused (HTTP ${answer.status}): ${statusMessage(answer)}`);
  }
  const status = (answer.body as { status?: { allowed?: boolean; reason?: string } }).status;
  return status?.allowed === true ? { allowed: true } : { allowed: false, reason: status?.reason ?? "" };
}
