// `virtualmachineinstances/NAME/guestosinfo | userlist | filesystemlist`: what the guest agent
// reports. virt-api's httpGetRequestHandler answers every failed precondition (VMI missing, not
// Running, no AgentConnected condition) with response.WriteError(500, err): HTTP 500 and the
// StatusError's message as plain text, not a Status object.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registry } from "../apiserver/registry.ts";
import { stringField } from "../cluster/objects.ts";
import { virtualMachineInstances } from "../cluster/resources.ts";
import { findCondition } from "../controller/kubevirt-state.ts";
import type { GuestRuntime } from "../guests/guest-runtime.ts";
import type { ResourceRequestInfo } from "../http/request-info.ts";
import { methodNotAllowed, qualifiedResource, sendJson } from "../http/status.ts";
import { vmiResource } from "./kubevirt-target.ts";

export const guestAgentSubresources = new Set(["guestosinfo", "userlist", "filesystemlist"]);

export async function serveGuestAgent(
  registry: Registry,
  guests: GuestRuntime,
  request: IncomingMessage,
  response: ServerResponse,
  info: ResourceRequestInfo,
): Promise<void> {
  if (request.method !== "GET") throw methodNotAllowed();
  const { namespace, name } = info;
  const resource = qualifiedResource(vmiResource);
  const vmi = registry.find(virtualMachineInstances, namespace, name);
  if (!vmi) return sendPlainError(response, `${resource} "${name}" not found`);
  const cannot = (why: string) => `Operation cannot be fulfilled on ${resource} "${name}": ${why}`;
  if (stringField(vmi, "status", "phase") !== "Running") {
    return sendPlainError(response, cannot("VMI is not running"));
  }
  const guest = guests.find(vmi.metadata.uid);
  if (!findCondition(vmi, "AgentConnected") || !guest) {
    return sendPlainError(response, cannot("VMI does not have guest agent connected"));
  }
  switch (info.subresource) {
    case "guestosinfo":
      return sendJson(response, 200, await guest.guestOsInfo());
    case "userlist":
      return sendJson(response, 200, await guest.userList());
    default:
      return sendJson(response, 200, await guest.filesystemList());
  }
}

function sendPlainError(response: ServerResponse, message: string): void {
  response.writeHead(500, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(message),
  });
  response.end(message);
}
