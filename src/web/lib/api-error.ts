import type { TFunction } from "i18next";
import { english, type LocalText } from "./i18n/pick-translation.ts";
import type { Language } from "./i18n/languages.ts";

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

/** Codes the page itself gives when there is no error body to read (see api-client.ts). */
const clientCodes = ["network", "bad_response", "server", "http"] as const;
/** The BFF's codes. Its message is specific ("…for \"Linux basics\"…") but English only. */
const serverCodes = [
  "unauthenticated",
  "forbidden",
  "csrf",
  "not_found",
  "invalid",
  "conflict",
  "quota",
  "rate_limited",
  "capacity",
  "cluster_unavailable",
  "cluster_error",
  "database_unavailable",
  "unavailable",
  "internal",
] as const;
type ClientCode = (typeof clientCodes)[number];
type ServerCode = (typeof serverCodes)[number];
export type ErrorCode = ClientCode | ServerCode;

export interface ErrorDescription {
  /** A sentence a person can act on, in their language where the page knows the error's code. */
  text: LocalText;
  /** The server's own, more specific words (English), when `text` translates only its code. */
  detail: string | null;
}

/**
 * Says what went wrong, for any error a page may hit. In English the BFF's message is the most
 * specific sentence there is; in other languages the page says the code's meaning and keeps the
 * message beside it. A code the page does not know shows the message: English beats nothing.
 */
export function describeError(
  error: unknown,
  t: TFunction,
  language: Language,
  overrides: Partial<Record<ErrorCode, string>> = {},
): ErrorDescription {
  if (!(error instanceof ApiError))
    return { text: { text: t("errors.unexpected"), lang: language }, detail: null };
  const code = error.code;
  const override = isErrorCode(code) ? overrides[code] : undefined;
  if (override !== undefined) return { text: { text: override, lang: language }, detail: null };
  if (isClientCode(code)) {
    return { text: { text: t(`errors.${code}`, { status: error.status }), lang: language }, detail: null };
  }
  if (language === "en" || !isServerCode(code)) return { text: english(error.message), detail: null };
  return { text: { text: t(`errors.${code}`), lang: language }, detail: error.message };
}

function isErrorCode(code: string): code is ErrorCode {
  return isClientCode(code) || isServerCode(code);
}

function isClientCode(code: string): code is ClientCode {
  return (clientCodes as readonly string[]).includes(code);
}

function isServerCode(code: string): code is ServerCode {
  return (serverCodes as readonly string[]).includes(code);
}
