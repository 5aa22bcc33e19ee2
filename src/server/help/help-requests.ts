// Raised hands: a student asks for help, a TA acknowledges. Stored as an annotation on the session's
// VM (patched like an extension), so a hand survives a BFF restart and every replica sees it.
import type { HelpRequest, Me, Session } from "../../common/api.ts";
import { DomainError } from "../errors/domain-error.ts";
import type { ClusterClient } from "../kube/client.ts";
import { annotationKeys, metadataPath } from "../sessions/labels.ts";
import type { SessionService } from "../sessions/service.ts";
import type { SessionSource } from "../sessions/source.ts";

const waitForReadsMs = 2000;
const annotationPath = metadataPath("annotations", annotationKeys.help);

export interface HelpRequestsDeps {
  cluster: Pick<ClusterClient, "patchVirtualMachine">;
  sessions: SessionService;
  source: SessionSource;
  now: () => Date;
}

export class HelpRequests {
  constructor(private readonly deps: HelpRequestsDeps) {}

  // Who may raise, answer or lower a hand is the routes' access rule (session-owner, session-staff).

  /** The owner raises a hand (raising it again replaces the note and waits anew). */
  async raise(user: Me, id: string, note: string): Promise<Session> {
    const session = await this.deps.sessions.get(user, id);
    if (session.status !== "running" && session.status !== "starting") {
      throw new DomainError(
        "conflict",
        "help_session_ended",
        "This session has ended; there is nothing to ask help for.",
      );
    }
    const help: HelpRequest = {
      raisedAt: this.deps.now().toISOString(),
      note: note.trim(),
      acknowledgedBy: null,
    };
    return this.store(user, session, help);
  }

  /** Staff answer the hand: it stays visible as acknowledged (by whom) until the student lowers it. */
  async acknowledge(user: Me, id: string): Promise<Session> {
    const session = await this.deps.sessions.get(user, id);
    if (!session.help) {
      throw new DomainError("conflict", "hand_not_raised", "This student's hand is not raised.");
    }
    return this.store(user, session, { ...session.help, acknowledgedBy: user.username });
  }

  /** The owner lowers the hand (answered or not). */
  async lower(user: Me, id: string): Promise<Session> {
    const session = await this.deps.sessions.get(user, id);
    if (!session.help) return session;
    return this.store(user, session, undefined);
  }

  private async store(user: Me, session: Session, help: HelpRequest | undefined): Promise<Session> {
    const value = help === undefined ? undefined : JSON.stringify(help);
    await this.deps.cluster.patchVirtualMachine(
      session.id,
      value === undefined
        ? [{ op: "remove", path: annotationPath }]
        : [{ op: "add", path: annotationPath, value }],
    );
    // So the answer, and the next poll, already show the change.
    await this.deps.source.waitForVm(
      session.id,
      (vm) => vm?.metadata.annotations?.[annotationKeys.help] === value,
      waitForReadsMs,
    );
    const current = await this.deps.sessions.get(user, session.id);
    return help === undefined ? { ...current, help: undefined } : { ...current, help };
  }
}
