import type { TFunction } from "i18next";
import { errorReasons, isOneOf, type ErrorParams, type ErrorReason } from "../../common/error-reasons.ts";
import { formatCoarse } from "./i18n/durations.ts";
import { languageInfo, type Language } from "./i18n/languages.ts";
import { english, type LocalText } from "./i18n/pick-translation.ts";

/** The one error type every API call throws; `code` mirrors the BFF's stable error codes. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** Which refusal it is (common/error-reasons.ts), when the BFF says; its sentence's parameters. */
  readonly reason: string | null;
  readonly params: ErrorParams;
  /** From a Retry-After header (429, 503): when trying again makes sense. */
  readonly retryAfterSeconds: number | null;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { reason?: string; params?: ErrorParams; retryAfterSeconds?: number | null } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.reason = options.reason ?? null;
    this.params = options.params ?? {};
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
  }
}

export function isApiError(error: unknown, status?: number): error is ApiError {
  return error instanceof ApiError && (status === undefined || error.status === status);
}

/** Codes the page itself gives when there is no error body to read (see api-client.ts). */
const clientCodes = ["network", "bad_response", "server", "http"] as const;
/** The BFF's general codes, for an error that names no reason this page knows. */
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

/**
 * Says what went wrong, for any error a page may hit, in the reader's language: the error's reason
 * from the catalogs with its parameters, else its code's general meaning. The BFF's English message
 * is shown only to English readers, where it is the most specific sentence there is, and for a code
 * this page does not know (a newer BFF): English beats nothing.
 */
export function describeError(
  error: unknown,
  t: TFunction,
  language: Language,
  overrides: Partial<Record<ErrorCode, string>> = {},
): LocalText {
  const local = (text: string): LocalText => ({ text, lang: language });
  if (!(error instanceof ApiError)) return local(t("errors.unexpected"));
  const { code, reason } = error;
  const override = isErrorCode(code) ? overrides[code] : undefined;
  if (override !== undefined) return local(override);
  if (isClientCode(code)) return local(t(`errors.${code}`, { status: error.status }));
  if (reason !== null && isOneOf(errorReasons, reason))
    return local(sayReason(reason, error.params, t, language));
  if (language === "en" || !isServerCode(code)) return english(error.message);
  return local(t(`errors.${code}`));
}

function sayReason(reason: ErrorReason, params: ErrorParams, t: TFunction, language: Language): string {
  const text = t(`errors.reasons.${reason}`, params);
  const endsAt = typeof params.endsAt === "string" ? Date.parse(params.endsAt) : Number.NaN;
  if (!Number.isFinite(endsAt)) return text;
  const ends = formatCoarse(endsAt - Date.now(), languageInfo[language].tag);
  return `${text} ${t("errors.nextEnds", { ends })}`;
}

function isErrorCode(code: string): code is ErrorCode {
  return isClientCode(code) || isServerCode(code);
}

function isClientCode(code: string): code is ClientCode {
  return isOneOf(clientCodes, code);
}

function isServerCode(code: string): code is ServerCode {
  return isOneOf(serverCodes, code);
}
