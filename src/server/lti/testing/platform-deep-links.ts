// Deep Linking 2.0's return: the tool posts a signed LtiDeepLinkingResponse, and each ltiResourceLink
// in it becomes a link of the course (with its line item when it asks for one). A request opened in
// the course page's frame is answered as Moodle's contentitem_return.php and Canvas do: the return
// page, in that frame, hands the result to its parent, the course page, which adds the links. A
// return posted from a window without that parent adds nothing, as in those LMSs.
import type { IncomingMessage, ServerResponse } from "node:http";
import { decodeJwt, jwtVerify, type JWTPayload } from "jose";
import type { PlatformContext } from "./platform-context.ts";
import { escapeHtml, HttpFailure, page, readForm, sendHtml } from "./platform-http.ts";
import { claims, type Launches, type PendingDeepLink } from "./platform-launch.ts";
import { coursePagePath } from "./platform-pages.ts";
import { newId, type ResourceLink } from "./platform-state.ts";

interface LtiResourceLinkItem {
  type: "ltiResourceLink";
  title?: string;
  url?: string;
  custom?: Record<string, string>;
  lineItem?: { label?: string; scoreMaximum: number; resourceId?: string; tag?: string };
}

function resourceLinkItem(raw: unknown): LtiResourceLinkItem | null {
  if (typeof raw !== "object" || raw === null) throw new HttpFailure(400, "a content item is not an object");
  const item = raw as Record<string, unknown>;
  if (item.type !== "ltiResourceLink") return null;
  if (item.custom !== undefined) {
    const custom = item.custom as Record<string, unknown>;
    if (
      typeof custom !== "object" ||
      custom === null ||
      Object.values(custom).some((value) => typeof value !== "string")
    )
      throw new HttpFailure(400, "custom must map names to strings");
  }
  if (item.lineItem !== undefined) {
    const lineItem = item.lineItem as Record<string, unknown>;
    if (
      typeof lineItem !== "object" ||
      lineItem === null ||
      typeof lineItem.scoreMaximum !== "number" ||
      !(lineItem.scoreMaximum > 0)
    )
      throw new HttpFailure(400, "lineItem.scoreMaximum must be a number above 0");
  }
  return item as unknown as LtiResourceLinkItem;
}

/** A checked result that waits for the course page around the frame to take it. */
interface Handoff {
  pending: PendingDeepLink;
  payload: JWTPayload;
}

export class DeepLinkReturns {
  private readonly usedNonces = new Set<string>();
  private readonly handoffs = new Map<string, Handoff>();

  constructor(
    private readonly platform: PlatformContext,
    private readonly launches: Launches,
  ) {}

  /** POST /deep-links/return */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const jwt = (await readForm(request)).get("JWT");
    if (!jwt) throw new HttpFailure(400, "the JWT form field is missing");
    const payload = await this.verified(jwt);
    const pending = this.launches.deepLinks.get(String(payload[claims.deepLinkingData]));
    if (!pending)
      throw new HttpFailure(400, "data does not echo a deep-linking request of this platform (or was used)");
    if (pending.clientId !== payload.iss) throw new HttpFailure(400, "the request was made to another tool");
    if (payload[claims.deploymentId] !== pending.deploymentId)
      throw new HttpFailure(400, "deployment_id differs from the request's");
    this.launches.deepLinks.delete(pending.data);
    if (!pending.frame) return this.addToCourse(pending, payload, response);

    const handoff = newId("handoff");
    this.handoffs.set(handoff, { pending, payload });
    sendHtml(
      response,
      200,
      page(
        "Returning to the course",
        `<p id="handoff" data-handoff="${escapeHtml(handoff)}">Returning to the course…</p>
<script>
const note = document.getElementById("handoff");
if (window.parent === window) {
  note.textContent = "This page hands its result to the course page that opened the tool, and there is none: nothing was added.";
} else {
  window.parent.postMessage({ type: "lti-deep-link-result", handoff: note.dataset.handoff }, location.origin);
}
</script>`,
      ),
    );
  }

  /** POST /deep-links/accept: the course page around the frame takes the result its frame handed it. */
  async accept(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const id = (await readForm(request)).get("handoff") ?? "";
    const handoff = this.handoffs.get(id);
    if (!handoff) throw new HttpFailure(400, "no such deep-linking result (or it was taken)");
    this.handoffs.delete(id);
    this.addToCourse(handoff.pending, handoff.payload, response);
  }

  private addToCourse(pending: PendingDeepLink, payload: JWTPayload, response: ServerResponse): void {
    const { state } = this.platform;
    const contentItems = payload[claims.contentItems] ?? [];
    if (!Array.isArray(contentItems)) throw new HttpFailure(400, "content_items must be an array");
    const items = contentItems.map(resourceLinkItem).filter((item) => item !== null);
    const added: ResourceLink[] = items.map((item) => {
      const link = state.addLink({
        id: newId("link"),
        courseId: pending.courseId,
        title: item.title ?? item.lineItem?.label ?? "Untitled",
        ...(item.url ? { url: item.url } : {}),
        custom: { ...item.custom },
        clientId: pending.clientId,
      });
      if (item.lineItem) {
        const lineItem = state.addLineItem({
          courseId: pending.courseId,
          label: item.lineItem.label ?? link.title,
          scoreMaximum: item.lineItem.scoreMaximum,
          ...(item.lineItem.resourceId !== undefined ? { resourceId: item.lineItem.resourceId } : {}),
          ...(item.lineItem.tag !== undefined ? { tag: item.lineItem.tag } : {}),
          resourceLinkId: link.id,
        });
        link.lineItemId = lineItem.id;
      }
      return link;
    });
    state.deepLinkReturns.push({
      courseId: pending.courseId,
      clientId: pending.clientId,
      contentItems,
      addedLinks: added,
    });

    const message = [payload[claims.deepLinkingMessage], payload[claims.deepLinkingError]].filter(
      (text) => typeof text === "string",
    );
    const back = coursePagePath(pending.sub, pending.courseId);
    sendHtml(
      response,
      200,
      page(
        state.course(pending.courseId).title,
        `<p>Added: ${escapeHtml(added.map((link) => link.title).join(", ") || "nothing")}</p>
${message.map((text) => `<p>${escapeHtml(text as string)}</p>`).join("\n")}
<p><a href="${escapeHtml(back)}">Back to the course</a></p>`,
      ),
    );
  }

  private async verified(jwt: string): Promise<JWTPayload> {
    let issuer: unknown;
    try {
      issuer = decodeJwt(jwt).iss;
    } catch {
      throw new HttpFailure(400, "JWT is not a JWT");
    }
    const tool = typeof issuer === "string" ? this.platform.state.tool(issuer) : undefined;
    if (!tool) throw new HttpFailure(400, "the JWT's iss names no registered client");
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(jwt, this.platform.toolKeys(tool.jwksUrl), {
        issuer: tool.clientId,
        audience: this.platform.url,
        algorithms: ["RS256"],
        requiredClaims: ["exp", "iat", "nonce"],
      }));
    } catch (error) {
      throw new HttpFailure(400, `the deep-linking response is refused: ${(error as Error).message}`);
    }
    if (payload[claims.messageType] !== "LtiDeepLinkingResponse")
      throw new HttpFailure(400, "message_type must be LtiDeepLinkingResponse");
    if (payload[claims.version] !== "1.3.0") throw new HttpFailure(400, "version must be 1.3.0");
    const nonce = `${tool.clientId} ${String(payload.nonce)}`;
    if (this.usedNonces.has(nonce)) throw new HttpFailure(400, "the nonce was already used");
    this.usedNonces.add(nonce);
    return payload;
  }
}
