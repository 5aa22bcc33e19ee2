// The id_token claims of LTI 1.3 Core, Deep Linking 2.0, AGS 2.0 and NRPS 2.0 that this console
// reads, as schemas: a claim of the wrong shape refuses the launch rather than being half-read.
import { z } from "zod";
import { secureUrl } from "../../http/secure-url.ts";

const lti = "https://purl.imsglobal.org/spec/lti/claim";
export const claimNames = {
  messageType: `${lti}/message_type`,
  version: `${lti}/version`,
  deploymentId: `${lti}/deployment_id`,
  targetLinkUri: `${lti}/target_link_uri`,
  resourceLink: `${lti}/resource_link`,
  roles: `${lti}/roles`,
  context: `${lti}/context`,
  custom: `${lti}/custom`,
  lis: `${lti}/lis`,
  ags: "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint",
  nrps: "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice",
  deepLinkingSettings: "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings",
  deepLinkingContentItems: "https://purl.imsglobal.org/spec/lti-dl/claim/content_items",
  deepLinkingData: "https://purl.imsglobal.org/spec/lti-dl/claim/data",
} as const;

const url = z
  .string()
  .url()
  .transform((text) => new URL(text));
const text = z.string().max(1000);

export const LaunchClaims = z.object({
  sub: z.string().min(1).max(255),
  name: text.optional(),
  email: z.string().max(254).optional(),
  [claimNames.messageType]: z.enum(["LtiResourceLinkRequest", "LtiDeepLinkingRequest"]),
  [claimNames.version]: z.literal("1.3.0"),
  [claimNames.deploymentId]: z.string().min(1).max(255),
  [claimNames.targetLinkUri]: z.string().max(2000),
  [claimNames.roles]: z.array(z.string().max(500)).max(100),
  [claimNames.resourceLink]: z.object({ id: z.string().min(1).max(255), title: text.optional() }).optional(),
  [claimNames.context]: z.object({
    id: z.string().min(1).max(255),
    title: text.optional(),
    label: text.optional(),
  }),
  [claimNames.custom]: z.record(z.string(), z.unknown()).optional(),
  [claimNames.lis]: z
    .object({ course_section_sourcedid: z.string().max(1000).optional() })
    .loose()
    .optional(),
  [claimNames.ags]: z
    // The console sends its bearer tokens to these service URLs: https only, as to a platform's own.
    .object({
      scope: z.array(z.string()).max(20),
      lineitems: secureUrl().optional(),
      lineitem: secureUrl().optional(),
    })
    .optional(),
  [claimNames.nrps]: z.object({ context_memberships_url: secureUrl() }).optional(),
  [claimNames.deepLinkingSettings]: z
    .object({
      deep_link_return_url: url,
      accept_types: z.array(z.string()).max(20),
      accept_multiple: z.boolean().optional(),
      data: z.string().max(4000).optional(),
    })
    .optional(),
});
export type LaunchClaims = z.output<typeof LaunchClaims>;
