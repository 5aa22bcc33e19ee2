import { afterEach, beforeEach, describe, expect, it, vi, type Mock } from "vitest";
import * as z from "zod/mini";
import { csrfHeader } from "../../common/api.ts";
import { apiRequest } from "./api-client.ts";
import { ApiError } from "./api-error.ts";

let fetchMock: Mock<typeof fetch>;

function answer(response: Response): void {
  fetchMock.mockResolvedValue(response);
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", ...headers },
  });
}

/** The init of the only fetch call. */
function requestInit(): RequestInit {
  expect(fetchMock).toHaveBeenCalledTimes(1);
  return fetchMock.mock.calls[0]![1]!;
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error;
}

const Lab = z.object({ id: z.string() });

beforeEach(() => {
  fetchMock = vi.fn<typeof fetch>();
  vi.stubGlobal("fetch", fetchMock);
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("apiRequest", () => {
  it("GETs under /api with revalidation and no CSRF header, and parses the body", async () => {
    answer(json(200, { id: "linux" }));
    await expect(apiRequest("/labs/linux", { schema: Lab })).resolves.toEqual({ id: "linux" });
    expect(fetchMock.mock.calls[0]![0]).toBe("/api/labs/linux");
    const init = requestInit();
    expect(init).toMatchObject({
      method: "GET",
      cache: "no-cache",
      credentials: "same-origin",
      body: undefined,
    });
    expect(init.headers).toEqual({ Accept: "application/json" });
  });

  it("sends the CSRF header and the JSON body on a POST, and never caches it", async () => {
    answer(new Response(null, { status: 204 }));
    await expect(
      apiRequest("/sessions", { method: "POST", body: { labId: "linux" } }),
    ).resolves.toBeUndefined();
    const init = requestInit();
    expect(init).toMatchObject({ method: "POST", cache: "no-store", body: '{"labId":"linux"}' });
    expect(init.headers).toEqual({
      Accept: "application/json",
      [csrfHeader.name]: csrfHeader.value,
      "Content-Type": "application/json",
    });
  });

  it("sends the CSRF header on a DELETE without a body", async () => {
    answer(new Response(null, { status: 204 }));
    await apiRequest("/sessions/s1", { method: "DELETE" });
    const init = requestInit();
    expect(init.body).toBeUndefined();
    expect(init.headers).toEqual({ Accept: "application/json", [csrfHeader.name]: csrfHeader.value });
  });

  it("passes the abort signal on", async () => {
    answer(new Response(null, { status: 204 }));
    const controller = new AbortController();
    await apiRequest("/labs", { signal: controller.signal });
    expect(requestInit().signal).toBe(controller.signal);
  });

  it("turns the BFF's error body into an ApiError with its code, message and Retry-After", async () => {
    answer(
      json(429, { error: { code: "rate_limited", message: "Too many requests." } }, { "Retry-After": "30" }),
    );
    const error = await rejection(apiRequest("/sessions", { method: "POST" }));
    expect(error).toMatchObject({
      status: 429,
      code: "rate_limited",
      message: "Too many requests.",
      retryAfterSeconds: 30,
    });
  });

  it("ignores a Retry-After that is not a number of seconds", async () => {
    answer(
      json(
        503,
        { error: { code: "unavailable", message: "Try later." } },
        { "Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT" },
      ),
    );
    const error = await rejection(apiRequest("/labs"));
    expect(error).toMatchObject({ status: 503, code: "unavailable", retryAfterSeconds: null });
  });

  it("says the server had a problem when a 5xx answer is not JSON (a proxy's error page)", async () => {
    answer(
      new Response("<html>Bad gateway</html>", { status: 502, headers: { "Content-Type": "text/html" } }),
    );
    const error = await rejection(apiRequest("/labs"));
    expect(error).toMatchObject({ status: 502, code: "server" });
  });

  it("names the HTTP status when a 4xx answer has no error body", async () => {
    answer(json(404, { something: "else" }));
    const error = await rejection(apiRequest("/labs/missing"));
    expect(error).toMatchObject({ status: 404, code: "http", message: "The request failed (HTTP 404)." });
  });

  it("reports a body that does not match the schema as bad_response", async () => {
    answer(json(200, { name: "no id" }));
    const error = await rejection(apiRequest("/labs/linux", { schema: Lab }));
    expect(error).toMatchObject({ status: 200, code: "bad_response" });
  });

  it("reports a success answer that is not JSON as bad_response", async () => {
    answer(new Response("<html>login</html>", { status: 200, headers: { "Content-Type": "text/html" } }));
    const error = await rejection(apiRequest("/labs/linux", { schema: Lab }));
    expect(error).toMatchObject({ status: 200, code: "bad_response" });
  });

  it("turns a failed fetch into a network ApiError", async () => {
    fetchMock.mockRejectedValue(new TypeError("Failed to fetch"));
    const error = await rejection(apiRequest("/labs"));
    expect(error).toMatchObject({ status: 0, code: "network" });
  });

  it("lets an abort through as it is, for TanStack Query to recognise", async () => {
    const controller = new AbortController();
    controller.abort();
    const abort = new DOMException("The operation was aborted.", "AbortError");
    fetchMock.mockRejectedValue(abort);
    await expect(apiRequest("/labs", { signal: controller.signal })).rejects.toBe(abort);
  });
});
