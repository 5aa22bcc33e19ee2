// One console recording of a session (its serial console's or a terminal's), read whole for the player.
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiFetch } from "../../../lib/api-client.ts";
import { parseCast, type Cast } from "../lib/asciicast-player.ts";
import { recordingKeys } from "./recording-keys.ts";
import { recordingPath } from "./recording-url.ts";

export async function getRecording(
  sessionId: string,
  terminal?: number,
  signal?: AbortSignal,
): Promise<Cast> {
  const response = await apiFetch(recordingPath(sessionId, terminal), "application/x-asciicast", { signal });
  return parseCast(await response.text());
}

export const recordingQueryOptions = (sessionId: string, terminal?: number) =>
  queryOptions({
    queryKey: recordingKeys.file(sessionId, terminal),
    queryFn: ({ signal }) => getRecording(sessionId, terminal, signal),
  });

export function useRecording(sessionId: string, terminal?: number) {
  return useQuery(recordingQueryOptions(sessionId, terminal));
}
