// What the emulator's authorizer decides on: the same attributes the Kubernetes API server builds
// from a request (k8s.io/apiserver authorizer.Attributes), so RBAC rules read exactly as they would.

export interface UserInfo {
  username: string;
  groups: string[];
}

export interface ResourceAttributes {
  kind: "resource";
  /** get, list, watch, create, update, patch, delete, deletecollection. Websocket subresources are "get". */
  verb: string;
  /** "" for the core group. */
  apiGroup: string;
  resource: string;
  /** "" when none; KubeVirt's portforward is just "portforward" (port and protocol are cut). */
  subresource: string;
  /** "" for cluster-scoped requests. */
  namespace: string;
  /** "" for collection requests. */
  name: string;
}

export interface NonResourceAttributes {
  kind: "nonResource";
  verb: string;
  path: string;
}

export type RequestAttributes = ResourceAttributes | NonResourceAttributes;

export interface Decision {
  allowed: boolean;
  /** Why, for logs and SelfSubjectAccessReview's status.reason. */
  reason: string;
}

export interface Authorizer {
  authorize(user: UserInfo, attributes: RequestAttributes): Decision;
}
