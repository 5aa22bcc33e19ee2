// The JSON API of LTI 1.3 (docs/lti.md) between the SPA and the BFF: the LMSs this console is
// registered with, the courses launched from them and their rosters, the grades outbox, and an
// instructor's choice of labs for a deep-linking request.
import * as z from "zod/mini";
import { Role } from "./api.ts";
import { Translations } from "./translations.ts";

/** A platform (an LMS) this console trusts for launches; `pending` ones wait for an instructor's approval. */
export const LtiPlatform = z.object({
  id: z.string(),
  name: z.string(),
  issuer: z.string(),
  clientId: z.string(),
  deploymentIds: z.array(z.string()),
  status: z.enum(["active", "pending"]),
  /** config: from LTI_PLATFORMS_FILE; dynamic: registered by the LMS through LTI Dynamic Registration. */
  source: z.enum(["config", "dynamic"]),
});
export type LtiPlatform = z.output<typeof LtiPlatform>;
export const LtiPlatformList = z.object({ items: z.array(LtiPlatform) });
export type LtiPlatformList = z.output<typeof LtiPlatformList>;

/** A course (an LTI context) someone was launched from. */
export const LtiCourse = z.object({
  id: z.string(),
  platformId: z.string(),
  platformName: z.string(),
  contextId: z.string(),
  title: z.nullable(z.string()),
  /** Whether the LMS offered its roster (NRPS) at a launch. */
  hasRoster: z.boolean(),
  rosterSyncedAt: z.nullable(z.string()),
  members: z.number(),
});
export type LtiCourse = z.output<typeof LtiCourse>;
export const LtiCourseList = z.object({ items: z.array(LtiCourse) });
export type LtiCourseList = z.output<typeof LtiCourseList>;

export const LtiRosterMember = z.object({
  /** The LMS's id for the person. */
  userId: z.string(),
  /** The Lab Console name the person signs in as. */
  username: z.nullable(z.string()),
  name: z.nullable(z.string()),
  email: z.nullable(z.string()),
  role: z.nullable(Role),
  sections: z.array(z.string()),
  status: z.enum(["Active", "Inactive", "Deleted"]),
});
export type LtiRosterMember = z.output<typeof LtiRosterMember>;
export const LtiRoster = z.object({ course: LtiCourse, members: z.array(LtiRosterMember) });
export type LtiRoster = z.output<typeof LtiRoster>;

export const ltiScoreStates = ["pending", "posted", "refused"] as const;
export const LtiScoreState = z.enum(ltiScoreStates);
export type LtiScoreState = z.output<typeof LtiScoreState>;

/** One score on its way to an LMS gradebook (the outbox). */
export const LtiScore = z.object({
  id: z.string(),
  labId: z.string(),
  student: z.string(),
  courseId: z.string(),
  courseTitle: z.nullable(z.string()),
  platformName: z.string(),
  /** run: a grading run's result; self-check: the student's latest self-check, when the link asks for it. */
  source: z.enum(["run", "self-check"]),
  scoreGiven: z.number(),
  scoreMaximum: z.number(),
  gradedAt: z.string(),
  state: LtiScoreState,
  attempts: z.number(),
  /** The LMS's own words when it refused, or why the last attempt failed. */
  lastError: z.nullable(z.string()),
  nextAttemptAt: z.nullable(z.string()),
  postedAt: z.nullable(z.string()),
});
export type LtiScore = z.output<typeof LtiScore>;
export const LtiScoreList = z.object({
  items: z.array(LtiScore),
  counts: z.object({ pending: z.number(), posted: z.number(), refused: z.number() }),
});
export type LtiScoreList = z.output<typeof LtiScoreList>;

/**
 * GET /api/lti/deep-links/:id: what the LMS asked for when an instructor chose "add content", and the
 * labs to choose from, with their texts in every language (the picker has no sign-in to read the
 * catalog with).
 */
export const LtiDeepLinkRequest = z.object({
  id: z.string(),
  platformName: z.string(),
  courseTitle: z.nullable(z.string()),
  acceptMultiple: z.boolean(),
  labs: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      description: z.optional(z.string()),
      translations: z.optional(
        z.object({ title: z.optional(Translations), description: z.optional(Translations) }),
      ),
    }),
  ),
});
export type LtiDeepLinkRequest = z.output<typeof LtiDeepLinkRequest>;

export const LtiDeepLinkChoice = z.object({
  labIds: z.array(z.string()).check(z.minLength(1), z.maxLength(50)),
  /** Also send each student's latest self-check to the gradebook, not only grading runs. */
  postSelfChecks: z.boolean(),
});
export type LtiDeepLinkChoice = z.output<typeof LtiDeepLinkChoice>;

/**
 * Where the browser goes next: a page of this console that posts the signed answer to the LMS (the
 * SPA's own pages may post forms only to this origin).
 */
export const LtiDeepLinkAnswer = z.object({ answerUrl: z.string() });
export type LtiDeepLinkAnswer = z.output<typeof LtiDeepLinkAnswer>;
