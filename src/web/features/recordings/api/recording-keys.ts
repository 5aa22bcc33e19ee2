// The recordings feature's query keys, general to specific: invalidating ["recordings"] refreshes the
// lists and every recording fetched for replay.
import type { RecordingFilters } from "./get-recordings.ts";

export const recordingKeys = {
  all: ["recordings"] as const,
  list: (filters: RecordingFilters) => [...recordingKeys.all, "list", filters] as const,
  file: (sessionId: string, terminal?: number) =>
    [...recordingKeys.all, "file", sessionId, terminal ?? 0] as const,
  screen: (sessionId: string) => [...recordingKeys.all, "screen", sessionId] as const,
};
