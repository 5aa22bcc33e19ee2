import { infiniteQueryOptions, useInfiniteQuery } from "@tanstack/react-query";
import { AuditPage, type AuditAction } from "../../../../common/operations-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { auditKeys } from "./audit-keys.ts";

export interface AuditFilters {
  user?: string;
  action?: AuditAction;
  session?: string;
  lab?: string;
}

const pageSize = 100;

/** The query string for these filters, also used by the export link. */
export function auditSearch(filters: AuditFilters, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams(extra);
  for (const [name, value] of Object.entries(filters)) if (value) params.set(name, value);
  return params.toString();
}

export function getAuditPage(filters: AuditFilters, before: number | undefined, signal?: AbortSignal) {
  const extra: Record<string, string> = { limit: String(pageSize) };
  if (before !== undefined) extra.before = String(before);
  return apiRequest(`/audit?${auditSearch(filters, extra)}`, { schema: AuditPage, signal });
}

export const auditQueryOptions = (filters: AuditFilters) =>
  infiniteQueryOptions({
    queryKey: auditKeys.list(filters),
    queryFn: ({ pageParam, signal }) => getAuditPage(filters, pageParam, signal),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (last) => last.nextBefore ?? undefined,
  });

export function useAuditLog(filters: AuditFilters) {
  return useInfiniteQuery(auditQueryOptions(filters));
}
