/**
 * A failure whose message is all a person needs (no Go, a failed build, a port in use, a refusal by
 * the API server): the command line prints it as it is, without a stack.
 */
export class SetupError extends Error {}
