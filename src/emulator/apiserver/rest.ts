// apiserver/: the Kubernetes API server's storage half, from a parsed request to the object store:
// bearer tokens (authentication.ts, service-accounts.ts), discovery, the REST verbs (this file) with
// patches, selectors, tables and watches, OpenAPI and the schema checks (openapi/), admission
// (admission/), and the registry and store the objects live in. The kinds and the shape of their
// objects are cluster/'s; the wire's helpers are http/'s; what happens to the objects once stored is
// controller/'s. The front door that routes requests here is ../apiserver.ts.
//
// REST verbs on stored kinds: get, list, watch, create, update, patch and delete, with the API
// server's query parameters (selectors here; limit/continue, dryRun, fieldValidation in
// query-parameters.ts) and its error replies. Writes pass schema checks and admission
// (write-preparation.ts) before the registry stores them; what a read returns is shaped as the
// client asked (present.ts), as every watch event is.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { PolicyWebhook } from "../cluster/cluster-config.ts";
import { isJsonObject, type JsonObject, type KubeObject } from "../cluster/objects.ts";
import {
  apiVersionOf,
  findResource,
  isCustomResource,
  namespaces,
  type ResourceType,
  type Verb,
} from "../cluster/resources.ts";
import { decodeBody, mediaType, readBody } from "../http/body.ts";
import { negotiate, type Representation } from "../http/negotiation.ts";
import type { ResourceRequestInfo } from "../http/request-info.ts";
import {
  ApiError,
  badRequest,
  methodNotAllowed,
  pathNotFound,
  sendJson,
  unsupportedMediaType,
} from "../http/status.ts";
import type { Authorizer, UserInfo } from "../rbac/attributes.ts";
import { enforceOwnerReferencePermissions } from "./admission/owner-reference-admission.ts";
import { jsonPatch, mergePatch } from "./patch.ts";
import { presentObject } from "./present.ts";
import {
  continueToken,
  dryRunOf,
  fieldValidationOf,
  includeObjectOf,
  propagationPolicyOf,
  readContinueToken,
} from "./query-parameters.ts";
import type { Registry } from "./registry.ts";
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "./selectors.ts";
import { objectKey } from "./store.ts";
import { toTable } from "./table.ts";
import type { WatchHub } from "./watch.ts";
import { prepareWrite, warningHeaders } from "./write-preparation.ts";

export interface RestContext {
  registry: Registry;
  watches: WatchHub;
  /** Asked by OwnerReferencesPermissionEnforcement; undefined when that admission plugin is off. */
  ownerReferenceAuthorizer?: Authorizer;
  /** The cluster's own validating webhooks (cluster config `policyWebhooks`). */
  policyWebhooks?: readonly PolicyWebhook[];
}

/** Who writes what where: what admission plugins that authorize the writer need. */
interface WriteTarget {
  user: UserInfo;
  resource: ResourceType;
  namespace: string;
  subresource: string;
}

export class RestHandler {
  constructor(private readonly context: RestContext) {}

  async serve(
    request: IncomingMessage,
    response: ServerResponse,
    info: ResourceRequestInfo,
    url: URL,
    user: UserInfo,
  ): Promise<void> {
    const resource = findResource(info.group, info.version, info.resource);
    if (!resource) throw pathNotFound();
    if (info.rest.length > 0) throw pathNotFound();
    if (info.subresource !== "" && !(info.subresource === "status" && resource.hasStatusSubresource)) {
      throw pathNotFound();
    }
    // For namespaces the parser reports the namespace's own name as namespace too.
    const namespace = resource.namespaced ? info.namespace : "";
    if (!resource.namespaced && info.namespace !== "" && resource !== namespaces) throw pathNotFound();
    if (resource.namespaced && info.name !== "" && namespace === "") throw pathNotFound();

    const verb = info.verb as Verb;
    const allowed =
      info.subresource === "status"
        ? ["get", "update", "patch"].includes(verb) && resource.verbs.includes("update")
        : resource.verbs.includes(verb);
    if (!allowed) throw methodNotAllowed();
    if (verb === "create" && (info.name !== "" || (resource.namespaced && namespace === "")))
      throw methodNotAllowed();

    const query = url.searchParams;
    const representation = negotiate(request.headers.accept);
    const target: WriteTarget = { user, resource, namespace, subresource: info.subresource };
    switch (verb) {
      case "get":
        return this.get(response, resource, namespace, info.name, representation, query);
      case "list":
        return this.list(response, resource, namespace, representation, query);
      case "watch":
        return this.watch(response, resource, namespace, info.name, representation, query);
      case "create":
        return this.create(request, response, target, query);
      case "update":
        return this.update(request, response, target, info.name, query);
      case "patch":
        return this.patch(request, response, target, info.name, query);
      case "delete":
        return this.delete(request, response, resource, namespace, info.name, query);
    }
  }

  private get(
    response: ServerResponse,
    resource: ResourceType,
    namespace: string,
    name: string,
    representation: Representation,
    query: URLSearchParams,
  ): void {
    const object = this.context.registry.get(resource, namespace, name);
    sendJson(response, 200, presentObject(resource, object, representation, includeObjectOf(query)));
  }

  private list(
    response: ServerResponse,
    resource: ResourceType,
    namespace: string,
    representation: Representation,
    query: URLSearchParams,
  ): void {
    const labelSelector = parseLabelSelector(query.get("labelSelector"));
    const fieldSelector = parseFieldSelector(query.get("fieldSelector"), resource);
    const limit = Number(query.get("limit") ?? "0");
    const continueFrom = query.get("continue");
    const store = this.context.registry.store;

    let revision = String(store.currentRevision());
    let items = store
      .list(resource, namespace || undefined)
      .filter(
        (object) =>
          matchesLabels(labelSelector, object.metadata.labels) && matchesFields(fieldSelector, object),
      );
    if (continueFrom) {
      const token = readContinueToken(continueFrom);
      revision = token.rv;
      items = items.filter(
        (object) => objectKey(object.metadata.namespace, object.metadata.name) > token.start,
      );
    }
    const listMeta: Record<string, unknown> = { resourceVersion: revision };
    if (Number.isInteger(limit) && limit > 0 && items.length > limit) {
      const remaining = items.length - limit;
      items = items.slice(0, limit);
      const last = items[items.length - 1];
      if (last) {
        listMeta.continue = continueToken(revision, objectKey(last.metadata.namespace, last.metadata.name));
        listMeta.remainingItemCount = remaining;
      }
    }

    if (representation.kind === "table") {
      sendJson(
        response,
        200,
        toTable(resource, items, {
          format: representation.format,
          include: includeObjectOf(query),
          listMeta,
        }),
      );
    } else if (representation.kind === "metadata") {
      sendJson(response, 200, {
        kind: "PartialObjectMetadataList",
        apiVersion: representation.apiVersion,
        metadata: listMeta,
        items: items.map((object) => ({
          kind: "PartialObjectMetadata",
          apiVersion: representation.apiVersion,
          metadata: object.metadata,
        })),
      });
    } else {
      sendJson(response, 200, {
        apiVersion: apiVersionOf(resource),
        kind: `${resource.kind}List`,
        metadata: listMeta,
        items,
      });
    }
  }

  private watch(
    response: ServerResponse,
    resource: ResourceType,
    namespace: string,
    name: string,
    representation: Representation,
    query: URLSearchParams,
  ): void {
    const fieldSelector = parseFieldSelector(query.get("fieldSelector"), resource);
    // The legacy /watch/.../{name} form watches one object.
    if (name !== "") fieldSelector.push({ path: "metadata.name", value: name, equal: true });
    const timeout = query.get("timeoutSeconds");
    const timeoutSeconds = timeout === null || timeout === "" ? undefined : Number(timeout);
    if (timeoutSeconds !== undefined && !(Number.isFinite(timeoutSeconds) && timeoutSeconds >= 0)) {
      throw badRequest(`invalid timeoutSeconds: ${timeout}`);
    }
    this.context.watches.serve(response, {
      resource,
      namespace,
      labelSelector: parseLabelSelector(query.get("labelSelector")),
      fieldSelector,
      resourceVersion: query.get("resourceVersion") ?? "",
      timeoutSeconds,
      allowBookmarks: query.get("allowWatchBookmarks") === "true",
      sendInitialEvents: query.get("sendInitialEvents") === "true",
      representation,
      includeObject: includeObjectOf(query),
    });
  }

  private async readJson(request: IncomingMessage): Promise<unknown> {
    const body = await readBody(request);
    return decodeBody(body, mediaType(request));
  }

  /** Admission plugins that need to know who writes (after the object's own checks). */
  private admitWriter(target: WriteTarget, object: JsonObject, old?: KubeObject): void {
    const authorizer = this.context.ownerReferenceAuthorizer;
    if (authorizer) enforceOwnerReferencePermissions(authorizer, { ...target, object, old });
    // Validating webhooks run after the built-in admission, and a refusal is in the webhook's words.
    const operation = old ? "UPDATE" : "CREATE";
    const refusing = this.context.policyWebhooks?.find(
      (webhook) => webhook.resource === target.resource.plural && webhook.operations.includes(operation),
    );
    if (refusing) {
      throw new ApiError(
        422,
        "Invalid",
        `admission webhook "${refusing.name}" denied the request: ${refusing.message}`,
      );
    }
  }

  private async create(
    request: IncomingMessage,
    response: ServerResponse,
    target: WriteTarget,
    query: URLSearchParams,
  ): Promise<void> {
    const { resource, namespace } = target;
    const validation = fieldValidationOf(query);
    const dryRun = dryRunOf(query);
    const body = await this.readJson(request);
    if (resource.namespaced) this.context.registry.requireNamespace(namespace, true);
    const prepared = prepareWrite(resource, body, { namespace }, validation, "create");
    this.admitWriter(target, prepared.object);
    const created = this.context.registry.create(resource, prepared.object, { dryRun });
    sendJson(response, 201, created, warningHeaders(prepared.warnings));
  }

  private async update(
    request: IncomingMessage,
    response: ServerResponse,
    target: WriteTarget,
    name: string,
    query: URLSearchParams,
  ): Promise<void> {
    const { resource, namespace, subresource } = target;
    const validation = fieldValidationOf(query);
    const dryRun = dryRunOf(query);
    const body = await this.readJson(request);
    const current = this.context.registry.get(resource, namespace, name);
    const prepared = prepareWrite(resource, body, { namespace, name }, validation, "update");
    this.admitWriter(target, prepared.object, current);
    const updated = this.context.registry.update(resource, prepared.object, {
      dryRun,
      ...(subresource === "status" ? { subresource: "status" as const } : {}),
      requireResourceVersion: isCustomResource(resource),
    });
    sendJson(response, 200, updated, warningHeaders(prepared.warnings));
  }

  private async patch(
    request: IncomingMessage,
    response: ServerResponse,
    target: WriteTarget,
    name: string,
    query: URLSearchParams,
  ): Promise<void> {
    const { resource, namespace, subresource } = target;
    const validation = fieldValidationOf(query);
    const dryRun = dryRunOf(query);
    const contentType = mediaType(request);
    const supported = ["application/json-patch+json", "application/merge-patch+json"];
    // Built-in kinds also take strategic merge patch; for the flat kinds emulated here it merges like a merge patch.
    if (!isCustomResource(resource)) supported.push("application/strategic-merge-patch+json");
    if (!supported.includes(contentType)) throw unsupportedMediaType(contentType, supported);
    const patchDocument = decodeBody(await readBody(request), contentType);
    const current = this.context.registry.get(resource, namespace, name);
    const patched =
      contentType === "application/json-patch+json"
        ? jsonPatch(current, patchDocument)
        : mergePatch(current, patchDocument);
    if (isJsonObject(patched) && isJsonObject(patched.metadata)) {
      // A patch that leaves resourceVersion alone applies to whatever is stored now.
      const givenVersion =
        isJsonObject(patchDocument) && isJsonObject(patchDocument.metadata)
          ? patchDocument.metadata.resourceVersion
          : undefined;
      if (givenVersion === undefined) patched.metadata.resourceVersion = current.metadata.resourceVersion;
    }
    const prepared = prepareWrite(resource, patched, { namespace, name }, validation, "update");
    this.admitWriter(target, prepared.object, current);
    const updated = this.context.registry.update(resource, prepared.object, {
      dryRun,
      ...(subresource === "status" ? { subresource: "status" as const } : {}),
    });
    sendJson(response, 200, updated, warningHeaders(prepared.warnings));
  }

  private async delete(
    request: IncomingMessage,
    response: ServerResponse,
    resource: ResourceType,
    namespace: string,
    name: string,
    query: URLSearchParams,
  ): Promise<void> {
    const dryRun = dryRunOf(query);
    const raw = await readBody(request);
    let preconditions: { uid?: string; resourceVersion?: string } | undefined;
    let propagationPolicy = propagationPolicyOf(query.get("propagationPolicy"));
    if (raw.length > 0) {
      const options = decodeBody(raw, mediaType(request));
      if (isJsonObject(options)) propagationPolicy ??= propagationPolicyOf(options.propagationPolicy);
      if (isJsonObject(options) && isJsonObject(options.preconditions)) {
        const { uid, resourceVersion } = options.preconditions;
        preconditions = {
          ...(typeof uid === "string" ? { uid } : {}),
          ...(typeof resourceVersion === "string" ? { resourceVersion } : {}),
        };
      }
      if (isJsonObject(options) && Array.isArray(options.dryRun) && options.dryRun.includes("All")) {
        const deleted = this.context.registry.delete(resource, namespace, name, {
          dryRun: true,
          ...(preconditions ? { preconditions } : {}),
        });
        sendJson(response, 200, deleted);
        return;
      }
    }
    const deleted = this.context.registry.delete(resource, namespace, name, {
      dryRun,
      ...(preconditions ? { preconditions } : {}),
      ...(propagationPolicy ? { propagationPolicy } : {}),
    });
    sendJson(response, 200, deleted);
  }
}
