/** The one error type every API call throws; `code` mirrors the BFF's stable error codes. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** From a Retry-After header (429, 503): when trying again makes sense. */
  readonly retryAfterSeconds: number | null;

  constructor(status: number, code: string, message: string, retryAfterSeconds: number | null = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export function isApiError(error: unknown, status?: number): error is ApiError {
  return error instanceof ApiError && (status === undefined || error.status === status);
}

/** A sentence a person can act on, for any error a page may hit. */
export function getErrorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return "Something went wrong on this page. Reload it; if that does not help, tell your instructor.";
}
