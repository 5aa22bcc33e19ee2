import { queryOptions, useQuery } from "@tanstack/react-query";
import { z } from "zod";
import { LabSummary } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { labKeys } from "./lab-keys.ts";

const LabList = z.array(LabSummary);

export function getLabs(signal?: AbortSignal): Promise<LabSummary[]> {
  return apiRequest("/labs", { schema: LabList, signal });
}

export const labsQueryOptions = () =>
  queryOptions({
    queryKey: labKeys.list(),
    queryFn: ({ signal }) => getLabs(signal),
    // The catalog changes when an instructor deploys new lab files, not while a class works.
    staleTime: 5 * 60_000,
  });

export function useLabs() {
  return useQuery(labsQueryOptions());
}

/** Lab titles by id, for tables that only carry the lab id. */
export function useLabTitles(): ReadonlyMap<string, string> {
  const { data } = useQuery({ ...labsQueryOptions(), select: toTitles });
  return data ?? emptyTitles;
}

// Module-level so TanStack Query memoizes the map instead of rebuilding it on every render.
const toTitles = (labs: LabSummary[]): ReadonlyMap<string, string> =>
  new Map(labs.map((lab) => [lab.id, lab.title]));
const emptyTitles: ReadonlyMap<string, string> = new Map();
