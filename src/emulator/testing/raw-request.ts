// Plain HTTPS requests to an emulator, for tests that need to see status codes, headers and bodies
// exactly as they are on the wire.
import { request as httpsRequest } from "node:https";
import type { Emulator } from "../emulator.ts";
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";

/** What a request needs to know of an emulator, in-process or a separate process. */
export type EmulatorEndpoint = Pick<Emulator, "url" | "kubeconfigPath" | "adminToken">;

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as it came (a PNG, say). */
  bytes: Buffer;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface RawRequestOptions {
  body?: string | Buffer;
  contentType?: string;
  accept?: string;
  /** Bearer token; default the admin token, null for none. */
  token?: string | null;
}

function caOf(emulator: EmulatorEndpoint): string {
  const config = parseYaml(readFileSync(emulator.kubeconfigPath, "utf8")) as {
    clusters: { cluster: { "certificate-authority-data": string } }[];
  };
  const data = config.clusters[0]?.cluster["certificate-authority-data"] ?? "";
  return Buffer.from(data, "base64").toString("utf8");
}

export function rawRequest(
  emulator: EmulatorEndpoint,
  method: string,
  path: string,
  options: RawRequestOptions = {},
): Promise<RawResponse> {
  const url = new URL(path, emulator.url);
  const token = options.token === undefined ? emulator.adminToken : options.token;
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.contentType) headers["content-type"] = options.contentType;
  if (options.accept) headers.accept = options.accept;
  if (options.body !== undefined) headers["content-length"] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const request = httpsRequest(url, { method, headers, ca: caOf(emulator) }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString("utf8");
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, bytes, text, json });
      });
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(options.body);
  });
}

/** A JSON request: the body is serialized, the response parsed. */
export function jsonRequest(
  emulator: EmulatorEndpoint,
  method: string,
  path: string,
  body?: unknown,
  options: RawRequestOptions = {},
): Promise<RawResponse> {
  return rawRequest(emulator, method, path, {
    ...(body === undefined ? {} : { body: JSON.stringify(body), contentType: "application/json" }),
    ...options,
  });
}
