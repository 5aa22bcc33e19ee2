// Names and Role Provisioning Services 2.0: a course's members, paged by Link rel="next".
import type { IncomingMessage, ServerResponse } from "node:http";
import type { PlatformContext } from "./platform-context.ts";
import { HttpFailure, requireAccept, sendJson } from "./platform-http.ts";
import { paged, positiveLimit } from "./platform-ags.ts";
import { claims, nrpsScope } from "./platform-launch.ts";
import type { Enrolment } from "./platform-state.ts";
import type { TokenEndpoint } from "./platform-token.ts";

export const membershipContainerType = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json";

/** NRPS's `role` filter takes a full URI or a short name such as Learner. */
function hasRole(enrolment: Enrolment, role: string): boolean {
  return enrolment.roles.some((uri) => uri === role || uri.endsWith(`#${role}`) || uri.endsWith(`/${role}`));
}

export class Nrps {
  constructor(
    private readonly platform: PlatformContext,
    private readonly tokens: TokenEndpoint,
  ) {}

  /** GET /courses/:id/memberships */
  memberships(courseId: string, request: IncomingMessage, response: ServerResponse, url: URL): void {
    if (request.method !== "GET") throw new HttpFailure(405, "GET");
    this.tokens.authorize(request, [nrpsScope]);
    requireAccept(request, membershipContainerType);
    const { state, quirks } = this.platform;
    const course = state.courses.get(courseId);
    if (!course) throw new HttpFailure(404, "no such course");
    const role = url.searchParams.get("role");
    const linkId = url.searchParams.get("rlid");
    if (linkId !== null && state.links.get(linkId)?.courseId !== courseId)
      throw new HttpFailure(400, "rlid names no link of this course");

    const members = state.enrolments
      .filter((enrolment) => enrolment.courseId === courseId && (role === null || hasRole(enrolment, role)))
      .map((enrolment) => {
        const user = state.user(enrolment.sub);
        const lis =
          enrolment.sections.length > 0 ? { course_section_sourcedid: enrolment.sections.join(",") } : {};
        return {
          status: "Active",
          name: user.name,
          ...(user.givenName ? { given_name: user.givenName } : {}),
          ...(user.familyName ? { family_name: user.familyName } : {}),
          email: user.email,
          user_id: user.sub,
          lis_person_sourcedid: user.sub,
          roles: enrolment.roles,
          // Sections as the 1EdTech course groups extension (and Moodle and D2L) add them to a member.
          group_enrollments: enrolment.sections.map((section) => ({ group_id: section })),
          // With rlid, NRPS lets a member carry the claims a launch of that link would give it.
          ...(linkId !== null
            ? {
                message: [
                  {
                    [claims.messageType]: "LtiResourceLinkRequest",
                    [claims.custom]: state.links.get(linkId)!.custom,
                    [claims.lis]: { person_sourcedid: user.sub, course_offering_sourcedid: courseId, ...lis },
                  },
                ],
              }
            : {}),
        };
      });
    const limit = positiveLimit(url);
    const pageSize =
      limit !== null && quirks.nrpsPageSize !== null
        ? Math.min(limit, quirks.nrpsPageSize)
        : (limit ?? quirks.nrpsPageSize);
    const { items, headers } = paged(members, url, pageSize);
    sendJson(
      response,
      200,
      { id: url.href, context: { id: course.id, label: course.label, title: course.title }, members: items },
      membershipContainerType,
      headers,
    );
  }
}
