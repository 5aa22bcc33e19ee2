import { useQuery } from "@tanstack/react-query";
import { BootLog } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { sessionKeys } from "./session-keys.ts";

/** Often enough to follow a boot line by line, rare enough for a class of students. */
const bootLogPollMs = 2000;

export function getBootLog(sessionId: string, signal?: AbortSignal): Promise<BootLog> {
  return apiRequest(`/sessions/${encodeURIComponent(sessionId)}/boot-log`, { schema: BootLog, signal });
}

/**
 * `follow`: poll while the VM boots; otherwise fetch once each time the log is shown. A VM whose
 * serial console log is off never gets one, so there is nothing to follow.
 */
export function useBootLog(sessionId: string, { follow }: { follow: boolean }) {
  return useQuery({
    queryKey: [...sessionKeys.detail(sessionId), "boot-log"],
    queryFn: ({ signal }) => getBootLog(sessionId, signal),
    refetchInterval: (query) => (follow && query.state.data?.logging !== "off" ? bootLogPollMs : false),
  });
}
