// Deep Linking 2.0: an instructor, launched from "add content" in their course, picks labs from the
// catalog, and the LMS gets them back as resource links in a signed LtiDeepLinkingResponse. The
// request waits (an hour) while they choose; the signed answer waits (one use) until the browser
// fetches the page that posts it to the LMS.
//
// None of it needs a sign-in. Canvas and Moodle open "add content" in a frame and read the answer
// from the frame's parent, so the whole choice happens inside the frame, where a browser may refuse
// Lab Console's cookie as a third party's. The request's id is the capability instead: 256 random
// bits that only the launch's browser was given, good for an hour and one answer, naming one course
// and one instructor (checked by the launch) and able to do one thing: add labs to that course.
import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import * as z from "zod/mini";
import {
  LtiDeepLinkChoice,
  type LtiDeepLinkAnswer,
  type LtiDeepLinkRequest,
} from "../../../common/lti-api.ts";
import { type Lab, labPoints } from "../../../common/lab.ts";
import type { AuditLog } from "../../audit/audit-log.ts";
import { HttpError, parseOrThrow } from "../../http/errors.ts";
import type { DeepLinkingSettings } from "./check-launch.ts";
import { claimNames } from "./claims.ts";
import type { LtiLaunchStore } from "./store/repository.ts";
import type { LaunchRecorder, LtiLaunch, PlatformDirectory, ToolSigner } from "../model/model.ts";
import { ltiLaunchPath } from "./lti-paths.ts";
import { sendPostToLmsPage } from "./pages.ts";

const requestLifetimeMs = 60 * 60_000;
const answerLifetimeMs = 5 * 60_000;

interface KeptRequest {
  platformId: string;
  deploymentId: string;
  username: string;
  contextId: string;
  courseTitle: string | null;
  settings: DeepLinkingSettings;
}

interface KeptAnswer {
  returnUrl: string;
  jwt: string;
  platformName: string;
}

const IdParams = z.object({ id: z.string().check(z.regex(/^[\w-]{43}$/, "not a deep-linking request")) });

/** Keeps an instructor's deep-linking request; its id is where the SPA's picker finds it, and all it needs. */
export async function keepDeepLinkRequest(
  store: LtiLaunchStore,
  launch: LtiLaunch,
  settings: DeepLinkingSettings,
  now: number,
): Promise<string> {
  const id = randomBytes(32).toString("base64url");
  const kept: KeptRequest = {
    platformId: launch.platform.id,
    deploymentId: launch.deploymentId,
    username: launch.username,
    contextId: launch.context.id,
    courseTitle: launch.context.title ?? null,
    settings,
  };
  await store.keep("deep-link", id, JSON.stringify(kept), now + requestLifetimeMs);
  return id;
}

export function registerDeepLinkingRoutes(
  app: FastifyInstance,
  deps: {
    store: LtiLaunchStore;
    platforms: PlatformDirectory;
    signer: ToolSigner;
    columns: Pick<LaunchRecorder, "hasColumn">;
    labs: Lab[];
    audit: AuditLog;
    publicUrl: URL;
    now: () => number;
  },
): void {
  // The id in the path is the authorisation (above): no cookie reaches a frame for sure.
  const byRequestId = { config: { access: "public" } } as const;
  const gone = () =>
    new HttpError(
      404,
      "not_found",
      "This request to add labs has expired or was used. Start again from your course: add content, then Lab Console.",
      "lti_deep_link_not_found",
    );

  /** The LMS not answering costs the check, never the instructor's choice: a column is then proposed. */
  async function hasColumn(kept: KeptRequest, labId: string): Promise<boolean> {
    return deps.columns.hasColumn(kept.platformId, kept.contextId, labId).catch(() => false);
  }

  async function requestOf(id: string, take: boolean): Promise<KeptRequest> {
    const now = deps.now();
    const value = take
      ? await deps.store.take("deep-link", id, now)
      : await deps.store.peek("deep-link", id, now);
    if (value === undefined) throw gone();
    return JSON.parse(value) as KeptRequest;
  }

  app.get("/api/lti/deep-links/:id", byRequestId, async (request): Promise<LtiDeepLinkRequest> => {
    const { id } = parseOrThrow(IdParams, request.params);
    const kept = await requestOf(id, false);
    return {
      id,
      platformName: deps.platforms.get(kept.platformId)?.name ?? kept.platformId,
      courseTitle: kept.courseTitle,
      acceptMultiple: kept.settings.acceptMultiple,
      // With their translations: the picker cannot read the catalog, which wants a sign-in.
      labs: deps.labs.map((lab) => ({
        id: lab.id,
        title: lab.title,
        description: lab.description,
        ...(lab.translations && { translations: lab.translations }),
      })),
    };
  });

  app.post("/api/lti/deep-links/:id", byRequestId, async (request): Promise<LtiDeepLinkAnswer> => {
    const { id } = parseOrThrow(IdParams, request.params);
    const choice = parseOrThrow(LtiDeepLinkChoice, request.body);
    const peeked = await requestOf(id, false);
    const labs = choice.labIds.map((labId) => deps.labs.find((lab) => lab.id === labId));
    if (labs.some((lab) => lab === undefined) || new Set(choice.labIds).size !== choice.labIds.length) {
      throw new HttpError(400, "invalid", "Choose labs from the list, each once.", "lti_lab_choice_invalid");
    }
    if (!peeked.settings.acceptMultiple && labs.length > 1) {
      throw new HttpError(400, "invalid", "This course accepts one lab at a time.", "lti_lab_choice_invalid");
    }
    const platform = deps.platforms.get(peeked.platformId);
    if (!platform) throw gone();
    const kept = await requestOf(id, true);
    const launchUrl = new URL(ltiLaunchPath, deps.publicUrl).href;
    const contentItems = await Promise.all(
      (labs as Lab[]).map(async (lab) => ({
        type: "ltiResourceLink",
        title: lab.title,
        text: lab.description.slice(0, 1000),
        url: launchUrl,
        custom: { lab: lab.id, post_self_checks: String(choice.postSelfChecks) },
        // One column per lab and course: a lab added again is a second link to the column it has.
        ...((await hasColumn(kept, lab.id))
          ? {}
          : {
              lineItem: {
                scoreMaximum: labPoints(lab),
                label: lab.title,
                resourceId: lab.id,
                tag: "lab-console",
              },
            }),
      })),
    );
    const issuedAt = Math.floor(deps.now() / 1000);
    const jwt = await deps.signer.sign({
      iss: platform.clientId,
      aud: platform.issuer,
      iat: issuedAt,
      exp: issuedAt + 600,
      nonce: randomBytes(16).toString("base64url"),
      [claimNames.deploymentId]: kept.deploymentId,
      [claimNames.messageType]: "LtiDeepLinkingResponse",
      [claimNames.version]: "1.3.0",
      [claimNames.deepLinkingContentItems]: contentItems,
      ...(kept.settings.data === undefined ? {} : { [claimNames.deepLinkingData]: kept.settings.data }),
    });
    const answerId = randomBytes(32).toString("base64url");
    const answer: KeptAnswer = {
      returnUrl: kept.settings.returnUrl,
      jwt,
      platformName: platform.name,
    };
    await deps.store.keep(
      "deep-link-answer",
      answerId,
      JSON.stringify(answer),
      deps.now() + answerLifetimeMs,
    );
    await deps.audit.record(
      {
        action: "lti-deep-link",
        // Whoever holds the id acts for the instructor whose launch made it (launches by anyone else
        // keep no request).
        actor: { username: kept.username, role: "instructor" },
        details: {
          platform: platform.id,
          course: kept.courseTitle,
          labs: choice.labIds.join(", "),
          postSelfChecks: choice.postSelfChecks,
        },
      },
      request,
    );
    return { answerUrl: `/api/lti/deep-link-answers/${answerId}` };
  });

  // Framed like the picker that goes to it, so the LMS's return page gets the answer in its frame too.
  app.get("/api/lti/deep-link-answers/:id", byRequestId, async (request, reply) => {
    const { id } = parseOrThrow(IdParams, request.params);
    const value = await deps.store.take("deep-link-answer", id, deps.now());
    if (value === undefined) throw gone();
    const answer = JSON.parse(value) as KeptAnswer;
    return sendPostToLmsPage(
      reply,
      new URL(answer.returnUrl),
      { JWT: answer.jwt },
      `Return to ${answer.platformName}`,
    );
  });
}
