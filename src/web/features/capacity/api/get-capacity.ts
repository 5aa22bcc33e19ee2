import { queryOptions, useQuery } from "@tanstack/react-query";
import { CapacityReport } from "../../../../common/operations-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { capacityKeys } from "./capacity-keys.ts";

export function getCapacity(signal?: AbortSignal): Promise<CapacityReport> {
  return apiRequest("/capacity", { schema: CapacityReport, signal });
}

export const capacityQueryOptions = () =>
  queryOptions({
    queryKey: capacityKeys.all,
    queryFn: ({ signal }) => getCapacity(signal),
    // Room changes as sessions start and end; the BFF reads the nodes at most every 10 s.
    refetchInterval: 15_000,
  });

export function useCapacity() {
  return useQuery(capacityQueryOptions());
}
