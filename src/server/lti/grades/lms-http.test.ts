// Reading an LMS's answers: its reasons, its paging and its Retry-After; and a body past the cap.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scoresUrl } from "./ags-client.ts";
import { LmsError, lmsReason, lmsRequest, nextPageUrl, retryAfterMs } from "./lms-http.ts";

describe("an LMS's reason", () => {
  it.each([
    [
      '{"errors":{"type":"unprocessable_entity","message":"Course not available for grading"}}',
      "Course not available for grading",
    ],
    [
      '{"errors":[{"message":"User not found in course"},{"message":"or not a student"}]}',
      "User not found in course; or not a student",
    ],
    [
      '{"errors":{"scoreGiven":["must be a number"],"userId":["is missing"]}}',
      "scoreGiven: must be a number; userId: is missing",
    ],
    ['{"error":"invalid_client","error_description":"The assertion expired"}', "The assertion expired"],
    ['{"message":"Line item not found"}', "Line item not found"],
    ['{"unexpected":true}', '{"unexpected":true}'],
    [
      "<html><head><style>p{}</style></head><body><h1>503</h1>\n<p>Down   for maintenance</p></body></html>",
      "503 Down for maintenance",
    ],
    ["", ""],
  ])("of %j is %j", (body, reason) => {
    expect(lmsReason(body)).toBe(reason);
  });

  it("is cut at 300 characters", () => {
    const reason = lmsReason(JSON.stringify({ message: "x".repeat(1000) }));
    expect(reason).toHaveLength(300);
    expect(reason.endsWith("…")).toBe(true);
  });
});

describe("an LMS's paging", () => {
  const page = new URL("https://lms.example/courses/7/memberships?limit=50");

  it("follows rel=next, relative or absolute, among other links", () => {
    expect(nextPageUrl('<https://lms.example/courses/7/memberships?page=2>; rel="next"', page)?.href).toBe(
      "https://lms.example/courses/7/memberships?page=2",
    );
    expect(
      nextPageUrl('</m?page=1>; rel="first", </m?page=3>; rel="next last", </m?page=9>; rel=last', page)
        ?.href,
    ).toBe("https://lms.example/m?page=3");
    expect(nextPageUrl("<https://lms.example/m?page=2>; rel=next", page)?.href).toBe(
      "https://lms.example/m?page=2",
    );
  });

  it("ends without rel=next, and never sends the token to another origin", () => {
    expect(nextPageUrl(null, page)).toBeUndefined();
    expect(nextPageUrl('<https://lms.example/m?page=1>; rel="prev"', page)).toBeUndefined();
    expect(nextPageUrl('<https://evil.example/m?page=2>; rel="next"', page)).toBeUndefined();
  });
});

describe("Retry-After", () => {
  it("is seconds or a date, and nothing when unreadable", () => {
    const now = Date.parse("2030-01-01T10:00:00Z");
    expect(retryAfterMs("120", now)).toBe(120_000);
    expect(retryAfterMs("Tue, 01 Jan 2030 10:01:30 GMT", now)).toBe(90_000);
    expect(retryAfterMs("Tue, 01 Jan 2030 09:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});

describe("a line item's scores URL", () => {
  it("puts /scores after the path, before the query", () => {
    expect(scoresUrl(new URL("https://lms.example/api/lti/courses/1/line_items/2")).href).toBe(
      "https://lms.example/api/lti/courses/1/line_items/2/scores",
    );
    expect(
      scoresUrl(new URL("https://lms.example/mod/lti/services.php/2/lineitems/7/lineitem?type_id=3")).href,
    ).toBe("https://lms.example/mod/lti/services.php/2/lineitems/7/lineitem/scores?type_id=3");
    expect(scoresUrl(new URL("https://lms.example/lineitems/2/")).href).toBe(
      "https://lms.example/lineitems/2/scores",
    );
  });
});

describe("a request to an LMS", () => {
  let base: string;
  // Where a redirect points: whatever reaches it is recorded.
  let elsewhere: string;
  const reachedElsewhere: (string | undefined)[] = [];
  const other = createServer((request, response) => {
    reachedElsewhere.push(request.headers.authorization);
    response.writeHead(204).end();
  });
  const server = createServer((request, response) => {
    if (request.url === "/endless") {
      response.writeHead(200, { "content-type": "application/json" });
      const chunk = "x".repeat(64 * 1024);
      const write = () => {
        while (response.write(chunk));
      };
      response.on("drain", write);
      write();
      return;
    }
    if (request.url === "/moved") {
      response.writeHead(307, { location: `${elsewhere}/scores` }).end();
      return;
    }
    if (request.url === "/busy") {
      response.writeHead(429, { "retry-after": "7" }).end('{"message":"Slow down"}');
      return;
    }
    response.writeHead(422, { "content-type": "application/json" }).end('{"errors":[{"message":"Nope"}]}');
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    elsewhere = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const each of [server, other]) {
      each.closeAllConnections();
      await new Promise((resolve) => each.close(resolve));
    }
  });
  const send = (path: string, headers: Record<string, string> = {}) =>
    lmsRequest({
      method: "GET",
      url: new URL(path, base),
      headers,
      maxBytes: 1024 * 1024,
      what: "a test",
    });

  it("follows no redirect, so the bearer token never goes where the LMS did not name", async () => {
    const error = await send("/moved", { authorization: "Bearer secret" }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(LmsError);
    expect((error as LmsError).message).toMatch(
      /answered a test with a redirect, which Lab Console does not follow/,
    );
    expect(reachedElsewhere).toEqual([]);
  });

  it("drops an answer past its cap instead of reading it whole", async () => {
    const error = await send("/endless").catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(LmsError);
    expect((error as LmsError).message).toMatch(/more than 1048576 bytes/);
    expect((error as LmsError).transient).toBe(true);
  });

  it("carries the LMS's status, reason and Retry-After", async () => {
    const busy = (await send("/busy").catch((thrown: unknown) => thrown)) as LmsError;
    expect(busy).toMatchObject({ status: 429, retryAfterMs: 7000, transient: true });
    expect(busy.message).toContain("Slow down");
    const refused = (await send("/refuse").catch((thrown: unknown) => thrown)) as LmsError;
    expect(refused).toMatchObject({ status: 422, transient: false });
    expect(refused.message).toMatch(/refused a test \(HTTP 422\): Nope$/);
  });

  it("says an LMS that cannot be reached could not be, and that it may come back", async () => {
    // A port that was just free: nothing listens there.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const error = (await lmsRequest({
      method: "GET",
      url: new URL(`http://127.0.0.1:${port}/nothing`),
      headers: {},
      maxBytes: 1024,
      what: "a test",
    }).catch((thrown: unknown) => thrown)) as LmsError;
    expect(error).toMatchObject({ status: undefined, transient: true });
    expect(error.message).toMatch(/could not be reached for a test \(ECONNREFUSED\)/);
  });
});
