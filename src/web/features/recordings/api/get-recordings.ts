import { keepPreviousData, queryOptions, useQuery } from "@tanstack/react-query";
import { RecordingList } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { recordingKeys } from "./recording-keys.ts";

export interface RecordingFilters {
  lab?: string;
  /** Staff only: the BFF gives a student their own recordings whatever this says. */
  student?: string;
}

export function getRecordings(filters: RecordingFilters, signal?: AbortSignal): Promise<RecordingList> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value) search.set(name, value);
  const query = search.size > 0 ? `?${search}` : "";
  return apiRequest(`/recordings${query}`, { schema: RecordingList, signal });
}

export const recordingsQueryOptions = (filters: RecordingFilters) =>
  queryOptions({
    queryKey: recordingKeys.list(filters),
    queryFn: ({ signal }) => getRecordings(filters, signal),
    // While another filter loads, keep showing the last rows instead of blanking the table.
    placeholderData: keepPreviousData,
  });

export function useRecordings(filters: RecordingFilters) {
  return useQuery(recordingsQueryOptions(filters));
}
