// The API server's query parameters as it reads them: fieldValidation and dryRun on writes,
// includeObject for tables, continue tokens for paged lists, propagationPolicy on deletes. Apart from
// the verbs (rest.ts) so that each refusal, in the API server's own words, is written once.
import type { DeleteOptions } from "./registry.ts";
import { isJsonObject } from "../cluster/objects.ts";
import { badRequest } from "../http/status.ts";
import type { IncludeObject } from "./table.ts";

export type FieldValidation = "Strict" | "Warn" | "Ignore";

export function fieldValidationOf(query: URLSearchParams): FieldValidation {
  const value = query.get("fieldValidation") ?? "";
  if (value === "") return "Warn";
  if (value === "Strict" || value === "Warn" || value === "Ignore") return value;
  throw badRequest(`fieldValidation parameter unsupported: ${value}`);
}

export function dryRunOf(query: URLSearchParams): boolean {
  const values = query.getAll("dryRun");
  for (const value of values) {
    if (value !== "All") throw badRequest(`Invalid dryRun value: ${value}. Supported value: All`);
  }
  return values.length > 0;
}

export function includeObjectOf(query: URLSearchParams): IncludeObject {
  const value = query.get("includeObject");
  return value === "None" || value === "Object" ? value : "Metadata";
}

export function continueToken(revision: string, lastKey: string): string {
  return Buffer.from(JSON.stringify({ rv: revision, start: lastKey })).toString("base64url");
}

export function readContinueToken(token: string): { rv: string; start: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as unknown;
    if (isJsonObject(parsed) && typeof parsed.rv === "string" && typeof parsed.start === "string") {
      return { rv: parsed.rv, start: parsed.start };
    }
  } catch {
    // Falls through to the error below.
  }
  throw badRequest(
    "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
  );
}

export function propagationPolicyOf(value: unknown): DeleteOptions["propagationPolicy"] {
  return value === "Foreground" || value === "Background" || value === "Orphan" ? value : undefined;
}
