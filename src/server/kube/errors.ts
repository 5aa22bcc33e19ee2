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
