// Request bodies: read with the API server's 3 MiB cap, decoded from JSON or YAML.
import type { IncomingMessage } from "node:http";
import { parse as parseYaml } from "yaml";
import { decodeProtobuf, protobufMediaType } from "./protobuf.ts";
import { ApiError, badRequest, unsupportedMediaType } from "./status.ts";

export const maxBodyBytes = 3 * 1024 * 1024;

function tooLarge(): ApiError {
  return new ApiError(413, "RequestEntityTooLarge", `Request entity too large: limit is ${maxBodyBytes}`);
}

/** Resolves with the whole body, or rejects with 413 as soon as it passes the cap. */
export function readBody(request: IncomingMessage): Promise<Buffer> {
  const declared = Number(request.headers["content-length"] ?? "0");
  if (declared > maxBodyBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    request.on("data", (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > maxBodyBytes) {
        failed = true;
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    request.on("error", (error) => {
      if (!failed) {
        failed = true;
        reject(badRequest(`could not read the request body: ${error.message}`));
      }
    });
  });
}

export function mediaType(request: IncomingMessage): string {
  return (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

const jsonTypes = new Set([
  "",
  "application/json",
  "application/merge-patch+json",
  "application/json-patch+json",
  "application/strategic-merge-patch+json",
]);
const yamlTypes = new Set(["application/yaml", "application/x-yaml", "text/yaml"]);

/** Decodes a JSON or YAML body, or the few protobuf kinds kubectl sends; anything else is 415. */
export function decodeBody(body: Buffer, contentType: string): unknown {
  if (contentType === protobufMediaType) return decodeProtobuf(body);
  const text = body.toString("utf8");
  if (jsonTypes.has(contentType)) {
    if (text.trim() === "") throw badRequest("the request body is empty");
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw badRequest(`the request body is not valid JSON: ${(error as Error).message}`);
    }
  }
  if (yamlTypes.has(contentType)) {
    try {
      const documents = parseYaml(text, { maxAliasCount: 100 }) as unknown;
      if (documents === null || documents === undefined) throw badRequest("the request body is empty");
      return documents;
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw badRequest(`the request body is not valid YAML: ${(error as Error).message}`);
    }
  }
  throw unsupportedMediaType(contentType, ["application/json", "application/yaml"]);
}
