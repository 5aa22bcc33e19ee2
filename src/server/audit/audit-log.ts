// The audit log every feature writes to: who did what to which session, when, and from where.
// Writing never fails the action it describes: a full disk must not stop a student from ending a
// session. A lost entry is logged and counted (lab_console_audit_write_failures_total) instead.
import { isIP } from "node:net";
import type { FastifyRequest } from "fastify";
import type { Role, Session } from "../../common/api.ts";
import type { AuditAction, AuditEntry, AuditPage, AuditQuery } from "../../common/operations-api.ts";
import type { AuditFilter, AuditRepository } from "./repository.ts";

/** Who acted: a signed-in person, someone who failed to sign in (role null), or the console itself. */
export type AuditActor = { username: string; role: Role | null } | "system";

export interface AuditEvent {
  action: AuditAction;
  actor: AuditActor;
  /** The session acted on; its lab (when known), owner and section are recorded with it. */
  session?: Pick<Session, "id" | "owner" | "section"> & Partial<Pick<Session, "labId">>;
  /** For actions on a lab rather than one session (a grading run, an export). */
  labId?: string;
  details?: AuditEntry["details"];
}

export interface AuditLogDeps {
  repository: AuditRepository;
  now: () => Date;
  log: { error(object: object, message: string): void };
  onWriteFailed?: () => void;
}

const maxTextLength = 200;
const exportBatch = 500;

export class AuditLog {
  constructor(private readonly deps: AuditLogDeps) {}

  /**
   * Stores one entry; `from` is the request that caused it (its client address and user agent).
   * Resolves once stored (or once the failure is logged); never rejects.
   */
  async record(event: AuditEvent, from?: FastifyRequest): Promise<void> {
    const actor = event.actor === "system" ? { username: "system", role: null } : event.actor;
    const userAgent = from?.headers["user-agent"];
    try {
      await this.deps.repository.append({
        at: this.deps.now().toISOString(),
        actor: clip(actor.username),
        actorRole: actor.role,
        action: event.action,
        sessionId: event.session?.id ?? null,
        labId: event.session?.labId ?? event.labId ?? null,
        owner: event.session?.owner ?? null,
        section: event.session?.section ?? null,
        details: event.details ?? {},
        // With a hop count, a client that bypassed the proxies chose this text itself.
        ip: from?.ip !== undefined && isIP(from.ip) !== 0 ? from.ip : null,
        userAgent: typeof userAgent === "string" ? clip(userAgent) : null,
      });
    } catch (error) {
      this.deps.onWriteFailed?.();
      this.deps.log.error(
        { err: error, action: event.action, actor: actor.username, session: event.session?.id },
        "audit entry could not be stored",
      );
    }
  }

  async list(query: AuditQuery): Promise<AuditPage> {
    const { before, limit, ...filter } = query;
    // One more than asked shows whether an older page exists.
    const items = await this.deps.repository.list(filter, { before, limit: limit + 1 });
    const page = items.slice(0, limit);
    const last = page.at(-1);
    return { items: page, nextBefore: items.length > limit && last ? last.id : null };
  }

  /** Every matching entry, newest first, read in batches so an export never holds the whole log. */
  async *entries(filter: AuditFilter): AsyncGenerator<AuditEntry> {
    let before: number | undefined;
    for (;;) {
      const batch = await this.deps.repository.list(filter, { before, limit: exportBatch });
      yield* batch;
      const last = batch.at(-1);
      if (batch.length < exportBatch || !last) return;
      before = last.id;
    }
  }
}

function clip(text: string): string {
  return text.length > maxTextLength ? `${text.slice(0, maxTextLength)}…` : text;
}
