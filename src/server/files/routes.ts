// PUT and GET /api/sessions/:id/files?path=P: a file into the student's home and out of it, through
// the VM's agent (docs/files.md). The owner uploads (staff never write into a student's home);
// the owner and staff download, staff for grading disputes. Every transfer is audited, whoever did it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Readable } from "node:stream";
import { fileLimits } from "../../common/files-api.ts";
import type { Session } from "../../common/api.ts";
import { grantedSession, signedInUser } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { AgentUnreachableError } from "../agent/errors.ts";
import type { ErrorParams } from "../../common/error-reasons.ts";
import { DomainError } from "../errors/domain-error.ts";
import { HttpError } from "../http/errors.ts";
import { FileTransferError, type AgentFiles } from "./agent-files.ts";
import { checkFilePath, fileNameOf } from "./file-path.ts";

export interface FileRoutesDeps {
  files: AgentFiles;
  audit: AuditLog;
}

const filesUrl = "/api/sessions/:id/files";

export function registerFileRoutes(app: FastifyInstance, deps: FileRoutesDeps): void {
  // Its own scope, so that only here the body is not read before the handler: an upload streams to
  // the VM as it arrives, and one that is refused is refused before it is sent.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, payload, done) => done(null, payload));
    scope.put(filesUrl, { config: { access: "session-owner" } }, async (request, reply) => {
      const user = signedInUser(request);
      const session = grantedSession(request);
      // Any refusal before the body was read closes the connection: the rest is not worth reading.
      reply.header("connection", "close");
      requireRunning(session);
      const path = checkFilePath(queryPath(request));
      const size = declaredSize(request);
      const uploaded = await translated(path, () =>
        deps.files.upload(session.id, path, size, request.body as Readable, untilGone(reply)),
      );
      reply.removeHeader("connection");
      await deps.audit.record(
        {
          action: "file-upload",
          actor: user,
          session,
          details: { path: uploaded.path, bytes: uploaded.bytes },
        },
        request,
      );
      return uploaded;
    });
  });

  app.get(filesUrl, { config: { access: "session" } }, async (request, reply) => {
    const user = signedInUser(request);
    const session = grantedSession(request);
    requireRunning(session);
    const path = checkFilePath(queryPath(request));
    const download = await translated(path, () => deps.files.download(session.id, path, untilGone(reply)));
    await deps.audit.record(
      { action: "file-download", actor: user, session, details: { path, bytes: download.size } },
      request,
    );
    return reply
      .header("content-type", "application/octet-stream")
      .header("content-length", String(download.size))
      .header("content-disposition", `attachment; filename*=UTF-8''${encodeURIComponent(fileNameOf(path))}`)
      .header("cache-control", "no-store")
      .send(download.body);
  });
}

function requireRunning(session: Session): void {
  if (session.status !== "running") {
    throw new DomainError(
      "conflict",
      "files_need_running_vm",
      "Files can be moved only while the VM is running. Wait until it is running.",
    );
  }
}

function queryPath(request: FastifyRequest): unknown {
  return (request.query as Record<string, unknown> | undefined)?.path;
}

/** The size the browser declared; without it the cap could only be found by reading. */
function declaredSize(request: FastifyRequest): number {
  const length = request.headers["content-length"];
  if (
    request.headers["transfer-encoding"] !== undefined ||
    length === undefined ||
    !/^\d{1,15}$/.test(length)
  ) {
    throw new HttpError(411, "invalid", "Send the file with a Content-Length.");
  }
  const size = Number(length);
  if (size > fileLimits.maxBytes) {
    throw new HttpError(
      413,
      "too_large",
      `The file is ${mebibytes(size)}; files up to ${mebibytes(fileLimits.maxBytes)} can be uploaded.`,
      "too_large",
      { maxMiB: fileLimits.maxBytes / 1024 / 1024 },
    );
  }
  return size;
}

/**
 * Aborts once the browser has gone, so the VM's side stops too. An upload whose browser left also
 * ends its body early, which stops the agent's side by itself.
 */
function untilGone(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) gone.abort(new Error("the browser left"));
  });
  return gone.signal;
}

/**
 * The agent's refusals keep their codes, each its reason, with the path asked for; a VM that cannot
 * be reached is a 502 in words.
 */
async function translated<T>(path: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof FileTransferError) {
      const params: ErrorParams =
        error.code === "too_large" ? { path, maxMiB: fileLimits.maxBytes / 1024 / 1024 } : { path };
      const reason = error.code === "invalid" ? undefined : error.code;
      throw new HttpError(error.status, error.code, error.message, reason, params);
    }
    if (error instanceof AgentUnreachableError) {
      throw new HttpError(502, "agent_unreachable", error.message, "agent_unreachable");
    }
    throw error;
  }
}

function mebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
