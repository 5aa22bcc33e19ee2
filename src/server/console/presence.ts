// Who has a console open, as every viewer is shown it: watching is never silent (Teleport announces
// every join; KubeVirt's maintainers object to consoles watched unseen). One entry per person, the
// owner first, then in the order people arrived; names and roles come from the sign-ins the BFF
// checked, never from anything a browser sent.
import type { ConsoleViewerEntry, ViewersMessage } from "../../common/console-protocol.ts";
import type { ViewerIdentity } from "./viewer.ts";

export function viewersMessage(
  identities: Iterable<ViewerIdentity>,
  owner: string,
  holder: string,
  canType: (identity: ViewerIdentity) => boolean,
): ViewersMessage {
  const people = new Map<string, ConsoleViewerEntry>();
  for (const identity of identities) {
    const mode = canType(identity) ? "type" : "observe";
    const known = people.get(identity.username);
    if (known) {
      if (mode === "type") known.mode = "type";
    } else {
      people.set(identity.username, { username: identity.username, role: identity.role, mode });
    }
  }
  const viewers = [...people.values()].sort(
    (a, b) => Number(b.username === owner) - Number(a.username === owner),
  );
  return { type: "viewers", viewers, holder };
}
