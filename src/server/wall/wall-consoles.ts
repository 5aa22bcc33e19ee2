// What the class wall may see and keep open of the consoles this replica holds.
import type { Session } from "../../common/api.ts";
import type { Lab } from "../../common/lab.ts";
import { consolesOfLab } from "../console/consoles.ts";
import type { ConsoleHub } from "../console/hub.ts";
import type { Coordination } from "../replicas/coordination.ts";
import type { WallConsoles } from "./wall-stream.ts";

export function wallConsoles(hub: ConsoleHub, coordination: Coordination, labs: Lab[]): WallConsoles {
  return {
    // Only where this replica holds (or may take) the console: a second connection would kick it.
    keepOpen: (session: Session) =>
      coordination.consoles
        .claim(session.id, (home) =>
          home.kind === "here" ? hub.keepShownOpen(session, consolesOfLab(labs, session.labId)) : undefined,
        )
        .catch(() => undefined),
    isOpen: (id) => hub.has(id),
    screenOf: (id) => hub.screenOf(id),
    thumbnailOf: (id) => hub.thumbnailOf(id),
  };
}
