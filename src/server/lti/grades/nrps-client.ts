// Names and Role Provisioning Services 2.0: a course's members, every page of them (Link rel="next").
// The pages and members read are capped: a platform that pages forever or names a million members
// gets an error, never the BFF's memory. A member the console cannot read (no user_id, no roles) is
// left out and counted, so one odd row does not cost the whole roster.
import * as z from "zod/mini";
import type { Platform } from "../model/model.ts";
import { LmsError, parseLmsJson } from "./lms-http.ts";
import { lmsPages } from "./lms-pages.ts";
import { scopes, type ServiceTokens } from "./service-token.ts";

const membershipContainer = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json";

export interface NrpsLimits {
  pages: number;
  members: number;
  pageBytes: number;
}

/** A lecture of a few thousand is the largest course; far past it is a platform gone wrong. */
export const defaultNrpsLimits: NrpsLimits = { pages: 200, members: 20_000, pageBytes: 8 * 1024 * 1024 };

const Id = z.pipe(
  z.union([z.string(), z.number()]),
  z.transform((id) => String(id)),
);

const NrpsMember = z.object({
  user_id: z.string().check(z.minLength(1), z.maxLength(255)),
  roles: z.array(z.string()),
  status: z.optional(z.string()),
  name: z.optional(z.string()),
  given_name: z.optional(z.string()),
  family_name: z.optional(z.string()),
  email: z.optional(z.string()),
  /** LTI Course Groups: the groups the member is in. */
  group_enrollments: z.optional(z.array(z.object({ group_id: Id }))),
  /** With `rlid`: the claims a launch of that link would carry for the member. */
  message: z.optional(z.array(z.record(z.string(), z.unknown()))),
});
export type NrpsMember = z.output<typeof NrpsMember>;

const Page = z.object({
  context: z.optional(z.object({ id: z.string(), title: z.optional(z.string()) })),
  members: z.array(z.unknown()),
});

export interface NrpsRoster {
  members: NrpsMember[];
  /** Rows left out for want of a user_id or roles. */
  unreadable: number;
}

export class NrpsClient {
  constructor(
    private readonly tokens: ServiceTokens,
    private readonly limits: NrpsLimits = defaultNrpsLimits,
  ) {}

  async members(platform: Platform, membershipsUrl: URL, signal?: AbortSignal): Promise<NrpsRoster> {
    const roster: NrpsRoster = { members: [], unreadable: 0 };
    const pages = lmsPages({
      tokens: this.tokens,
      platform,
      scope: scopes.memberships,
      first: membershipsUrl,
      accept: membershipContainer,
      maxPages: this.limits.pages,
      pageBytes: this.limits.pageBytes,
      items: "members",
      what: "the course's members",
      signal,
    });
    for await (const { url, text } of pages) {
      const { members } = parseLmsJson(text, Page, url, "a list of members");
      if (roster.members.length + members.length > this.limits.members) {
        throw new LmsError(
          undefined,
          `${membershipsUrl.host} gave more than ${this.limits.members} members.`,
        );
      }
      for (const member of members) {
        const parsed = z.safeParse(NrpsMember, member);
        if (parsed.success) roster.members.push(parsed.data);
        else roster.unreadable += 1;
      }
    }
    return roster;
  }
}
