// One session's console recording, read whole for the player.
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiFetch } from "../../../lib/api-client.ts";
import { parseCast, type Cast } from "../lib/asciicast-player.ts";
import { recordingKeys } from "./recording-keys.ts";
import { recordingPath } from "./recording-url.ts";

export async function getRecording(sessionId: string, signal?: AbortSignal): Promise<Cast> {
  const response = await apiFetch(recordingPath(sessionId), "application/x-asciicast", { signal });
  return parseCast(await response.text());
}

export const recordingQueryOptions = (sessionId: string) =>
  queryOptions({
    queryKey: recordingKeys.file(sessionId),
    queryFn: ({ signal }) => getRecording(sessionId, signal),
  });

export function useRecording(sessionId: string) {
  return useQuery(recordingQueryOptions(sessionId));
}
