// The labels and annotations that mark a VM as a Lab Console session and say whose it is.
// Labels are for selecting (they must be valid label values); annotations carry the raw values.
import { createHash } from "node:crypto";
import { sectionPattern } from "../../common/api.ts";
import { labIdPattern } from "../../common/lab.ts";

export const labelKeys = {
  managedBy: "app.kubernetes.io/managed-by",
  session: "labconsole.dev/session",
  lab: "labconsole.dev/lab",
  ownerId: "labconsole.dev/owner-id",
  /** The owner's section when the session started (access/sections.ts); absent without sections. */
  section: "labconsole.dev/section",
  /** A warm VM, booted for this scheduled class and not yet anyone's: not a session until claimed. */
  warmFor: "labconsole.dev/warm-for",
  /** The scheduled class whose warm pool a session came from. */
  fromClass: "labconsole.dev/class",
} as const;

export const annotationKeys = {
  /** The raw username: any characters, so never a label value. */
  owner: "labconsole.dev/owner",
  /** ISO 8601. */
  expiresAt: "labconsole.dev/expires-at",
  /** How often the session was extended, as a decimal string. */
  extensions: "labconsole.dev/extensions",
  /** The raised hand as JSON (HelpRequest): on the VM, so it survives restarts and every replica sees it. */
  help: "labconsole.dev/help",
  /** ISO 8601: when the warm pool found this warm VM's agent answering, so a launch may claim it. */
  warmReady: "labconsole.dev/warm-ready",
  /** ISO 8601: when a launch claimed this warm VM, the session's start (its VM is older). */
  claimedAt: "labconsole.dev/claimed-at",
  /**
   * ISO 8601: the last console input or agent-seen activity (idle/), written at most about once a
   * minute, so that every replica's idle pass reads the same time.
   */
  lastActive: "labconsole.dev/last-active",
  /** The idle warning or pause as JSON (SessionIdle), written by the idle pass; absent otherwise. */
  idle: "labconsole.dev/idle",
} as const;

export const managedByValue = "lab-console";

/** Selects every session VM; pass as labelSelector when listing or watching. */
export const sessionsSelector = `${labelKeys.managedBy}=${managedByValue}`;

/** A label-safe stand-in for a username: the first 16 hex digits of its SHA-256. */
export function ownerIdFor(username: string): string {
  return createHash("sha256").update(username, "utf8").digest("hex").slice(0, 16);
}

/**
 * The labels every session object carries (VM, VM template, cloud-init Secret). A warm VM has no owner
 * yet: it carries its class instead, until a launch claims it (classes/warm-claims.ts), and no section.
 */
export function sessionLabels(input: {
  sessionId: string;
  labId: string;
  owner: string | { warmFor: string };
  section?: string | null;
}): Record<string, string> {
  return {
    [labelKeys.managedBy]: managedByValue,
    [labelKeys.session]: input.sessionId,
    [labelKeys.lab]: input.labId,
    ...(typeof input.owner === "string"
      ? { [labelKeys.ownerId]: ownerIdFor(input.owner) }
      : { [labelKeys.warmFor]: input.owner.warmFor }),
    ...(input.section ? { [labelKeys.section]: sectionLabelValue(input.section) } : {}),
  };
}

/**
 * A section as a label value. The users file and the provider's groups give only valid names
 * (common/api.ts SectionName); checked again here, where an invalid one would reach the cluster.
 */
export function sectionLabelValue(section: string): string {
  if (!sectionPattern.test(section)) throw new Error(`not a section name: ${JSON.stringify(section)}`);
  return section;
}

/** Escapes a label or annotation key for a JSON Patch path (RFC 6901). */
export function metadataPath(kind: "labels" | "annotations", key: string): string {
  return `/metadata/${kind}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/** A label selector for sessions, optionally narrowed to one owner and/or one lab. */
export function sessionSelector(filter: { owner?: string; labId?: string } = {}): string {
  const parts = [sessionsSelector];
  if (filter.owner !== undefined) parts.push(`${labelKeys.ownerId}=${ownerIdFor(filter.owner)}`);
  if (filter.labId !== undefined) {
    // A comma or "!" in a lab id would change what the selector means.
    if (!labIdPattern.test(filter.labId)) throw new Error(`not a lab id: ${JSON.stringify(filter.labId)}`);
    parts.push(`${labelKeys.lab}=${filter.labId}`);
  }
  return parts.join(",");
}
