// A session's screen recording (docs/vnc.md, "Screen recordings"), read whole for the player.
import { queryOptions, useQuery } from "@tanstack/react-query";
import { graphicalConsole } from "../../../../common/console-protocol.ts";
import { parseScreenRecording, type ScreenRecording } from "../../../../common/screen-recording.ts";
import { apiFetch } from "../../../lib/api-client.ts";
import { recordingKeys } from "./recording-keys.ts";
import { recordingPath } from "./recording-url.ts";

export async function getScreenRecording(sessionId: string, signal?: AbortSignal): Promise<ScreenRecording> {
  const response = await apiFetch(recordingPath(sessionId, graphicalConsole), "application/x-ndjson", {
    signal,
  });
  return parseScreenRecording(await response.text());
}

export const screenRecordingQueryOptions = (sessionId: string) =>
  queryOptions({
    queryKey: recordingKeys.screen(sessionId),
    queryFn: ({ signal }) => getScreenRecording(sessionId, signal),
  });

export function useScreenRecording(sessionId: string) {
  return useQuery(screenRecordingQueryOptions(sessionId));
}
