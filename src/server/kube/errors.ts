// What can go wrong talking to the cluster, in two kinds: it answered with a Status, or it did not answer.

/** The API server answered with an error Status (metav1.Status). */
export class KubeStatusError extends Error {
  constructor(
    readonly statusCode: number,
    /** Status.reason, e.g. NotFound, AlreadyExists, Invalid, Expired; "" when the body had none. */
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** No answer at all: refused, reset, timed out, TLS failure. */
export class ClusterUnavailableError extends Error {
  constructor(override readonly cause: unknown) {
    super("The cluster cannot be reached right now. Sessions will be back when it is.");
  }
}

/**
 * The API server's answer to a JSON patch that does not apply to the object as it is now: a failed
 * `test`, a `remove` of what is gone. Every such error is NewGenericServerResponse(422) with this
 * message alone (k8s.io/apiserver handlers/patch.go applyJSPatch), while an admission webhook that
 * refuses the change answers 422 too, but in its own words ("admission webhook ... denied the
 * request: ..."). Only the first is the race a patch's test guards against.
 */
export function isPatchNotApplied(error: unknown): boolean {
  return (
    error instanceof KubeStatusError &&
    error.statusCode === 422 &&
    error.message === "the server rejected our request due to an error in our request"
  );
}
