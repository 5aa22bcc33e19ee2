// The platforms, as instructors see them, and the approval that lets a dynamically registered one
// sign people in. Also the tool's public keys, which every LMS fetches.
import type { FastifyInstance } from "fastify";
import * as z from "zod/mini";
import type { LtiPlatform, LtiPlatformList } from "../../../common/lti-api.ts";
import { grantedSignIn } from "../../access/policy.ts";
import type { AuditLog } from "../../audit/audit-log.ts";
import { HttpError, parseOrThrow } from "../../http/errors.ts";
import type { LtiLaunchStore } from "./store/repository.ts";
import type { Platform, PlatformDirectory } from "../model/model.ts";
import type { ToolKeyRing } from "./tool-keys.ts";

const PlatformIdParams = z.object({ id: z.string().check(z.maxLength(60)) });

export function platformView(platform: Platform): LtiPlatform {
  return {
    id: platform.id,
    name: platform.name,
    issuer: platform.issuer,
    clientId: platform.clientId,
    deploymentIds: platform.deploymentIds,
    status: platform.status,
    source: platform.source,
  };
}

export function registerPlatformRoutes(
  app: FastifyInstance,
  deps: {
    platforms: PlatformDirectory & { reload(): Promise<void> };
    store: LtiLaunchStore;
    keys: ToolKeyRing;
    audit: AuditLog;
  },
): void {
  const instructor = { config: { access: "instructor" } } as const;

  app.get("/api/lti/jwks", { config: { access: "public" } }, async (_request, reply) =>
    // Short caching: a new key is published a day before it signs, far longer than this.
    reply.header("cache-control", "public, max-age=300").send(await deps.keys.jwks()),
  );

  app.get("/api/lti/platforms", instructor, async (): Promise<LtiPlatformList> => {
    await deps.platforms.reload();
    return { items: deps.platforms.list().map(platformView) };
  });

  app.post("/api/lti/platforms/:id/approve", instructor, async (request): Promise<LtiPlatform> => {
    const { id } = parseOrThrow(PlatformIdParams, request.params);
    const signIn = grantedSignIn(request);
    // An approved LMS signs in instructors of its own: one of them approving another LMS would let
    // any LMS course's teacher widen who signs in. Approval is for those signed in otherwise.
    if (signIn.via === "lti") {
      throw new HttpError(
        403,
        "forbidden",
        "An instructor signed in through an LMS cannot approve an LMS: sign in to Lab Console directly.",
        "lti_approve_from_lms",
      );
    }
    const approved = await deps.store.approvePlatform(id);
    if (!approved) {
      throw new HttpError(
        404,
        "not_found",
        "No LMS registered itself under that id.",
        "lti_platform_not_found",
      );
    }
    await deps.platforms.reload();
    await deps.audit.record(
      {
        action: "lti-platform-approve",
        actor: signIn.user,
        details: { platform: id, issuer: approved.issuer },
      },
      request,
    );
    const platform = deps.platforms.get(id);
    if (!platform)
      throw new HttpError(
        404,
        "not_found",
        "No LMS registered itself under that id.",
        "lti_platform_not_found",
      );
    return platformView(platform);
  });
}
