import { queryOptions, useQuery } from "@tanstack/react-query";
import { BootLog, type Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { labSetup, runningSince, setupFollowedForMs, type LabSetup } from "../lib/lab-setup.ts";
import { sessionKeys } from "./session-keys.ts";

/** Often enough to follow a boot line by line, rare enough for a class of students. */
const bootLogPollMs = 2000;
/** A set-up takes about a minute: a few seconds late to say it is done is fine, for a fifth of the reads. */
const setupPollMs = 5000;

export function getBootLog(sessionId: string, signal?: AbortSignal): Promise<BootLog> {
  return apiRequest(`/sessions/${encodeURIComponent(sessionId)}/boot-log`, { schema: BootLog, signal });
}

/** One query for the boot log panel and the set-up step, which read the same log. */
function bootLogQuery(sessionId: string) {
  return queryOptions({
    queryKey: [...sessionKeys.detail(sessionId), "boot-log"],
    queryFn: ({ signal }) => getBootLog(sessionId, signal),
  });
}

/**
 * `follow`: poll while the VM boots; otherwise fetch once each time the log is shown. A VM whose
 * serial console log is off never gets one, so there is nothing to follow.
 */
export function useBootLog(sessionId: string, { follow }: { follow: boolean }) {
  return useQuery({
    ...bootLogQuery(sessionId),
    refetchInterval: (query) => (follow && query.state.data?.logging !== "off" ? bootLogPollMs : false),
  });
}

/**
 * The lab's set-up on a running VM (lib/lab-setup.ts), from its boot log, read until it says or until
 * the set-up is long past: a session reopened an hour later, or a warm VM's, reads nothing.
 */
export function useLabSetup(session: Session): LabSetup {
  const followed =
    session.status === "running" &&
    session.start === "cold" &&
    Date.now() - Date.parse(runningSince(session)) < setupFollowedForMs;
  const query = useQuery({
    ...bootLogQuery(session.id),
    enabled: followed,
    refetchInterval: (query) =>
      labSetup(session, query.state.data, Date.now()).state === "running" ? setupPollMs : false,
  });
  return labSetup(session, query.data, Date.now());
}
