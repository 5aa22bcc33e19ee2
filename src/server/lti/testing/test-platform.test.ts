// The test platform's own spec checks, with jose playing the tool: its key pair, its JWKS served from a
// small http server, and the requests a tool makes (login, token, AGS, NRPS, deep-linking answers).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createRemoteJWKSet,
  exportJWK,
  generateKeyPair,
  jwtVerify,
  SignJWT,
  type CryptoKey,
  type JWK,
} from "jose";
import { roles, startTestPlatform, type TestPlatform } from "./test-platform.ts";

const ags = {
  lineItem: "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
  score: "https://purl.imsglobal.org/spec/lti-ags/scope/score",
  resultReadOnly: "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
};
const nrpsScope = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly";
const types = {
  container: "application/vnd.ims.lis.v2.lineitemcontainer+json",
  lineItem: "application/vnd.ims.lis.v2.lineitem+json",
  score: "application/vnd.ims.lis.v1.score+json",
  results: "application/vnd.ims.lis.v2.resultcontainer+json",
  members: "application/vnd.ims.lti-nrps.v2.membershipcontainer+json",
};
const claim = (name: string) => `https://purl.imsglobal.org/spec/lti/claim/${name}`;

interface ToolKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function toolKey(): Promise<ToolKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const kid = randomUUID();
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" } };
}

/** Serves the tool's JWKS, the one thing of the tool the platform fetches. */
async function serveJwks(keys: () => JWK[]): Promise<{ url: string; server: Server }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: keys() }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`, server };
}

function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
    fields[name!] = value!.replaceAll("&quot;", '"').replaceAll("&amp;", "&");
  return fields;
}

function formAction(html: string): string {
  return /<form[^>]* action="([^"]*)"/.exec(html)![1]!.replaceAll("&amp;", "&");
}

const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
});

let platform: TestPlatform;
let key: ToolKey;
let jwks: Server;
const clientId = "lab-console";
const deploymentId = "deployment-1";
const tool = {
  clientId,
  loginUrl: "http://tool.invalid/login",
  redirectUris: ["http://tool.invalid/launch"],
  jwksUrl: "",
  deploymentId,
};

beforeAll(async () => {
  key = await toolKey();
  const served = await serveJwks(() => [key.publicJwk]);
  jwks = served.server;
  tool.jwksUrl = served.url;
});

afterAll(() => new Promise<void>((resolve) => jwks.close(() => resolve())));

beforeEach(async () => {
  platform = await startTestPlatform({ tool });
  platform.addCourse({ id: "c1", title: "Networks 101" });
  platform.addUser({ sub: "teacher", name: "Tess Teacher", email: "tess@school.test" });
  platform.enrol("c1", "teacher", [roles.instructor]);
  for (const n of [1, 2, 3, 4, 5]) {
    platform.addUser({ sub: `s${n}`, name: `Student ${n}`, email: `s${n}@school.test` });
    platform.enrol("c1", `s${n}`, [roles.learner], n % 2 ? ["Section A"] : ["Section B"]);
  }
  return () => platform.close();
});

function assertion(
  overrides: { kid?: string; key?: CryptoKey; audience?: string; jti?: string } = {},
): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: "RS256", kid: overrides.kid ?? key.kid })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(overrides.audience ?? platform.tokenUrl)
    .setIssuedAt()
    .setExpirationTime("5m")
    .setJti(overrides.jti ?? randomUUID())
    .sign(overrides.key ?? key.privateKey);
}

async function requestToken(clientAssertion: string, scopes: string[]): Promise<Response> {
  return fetch(
    platform.tokenUrl,
    form({
      grant_type: "client_credentials",
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      client_assertion: clientAssertion,
      scope: scopes.join(" "),
    }),
  );
}

async function accessToken(scopes = [...Object.values(ags), nrpsScope]): Promise<string> {
  const answer = await requestToken(await assertion(), scopes);
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { access_token: string }).access_token;
}

/** Follows a platform launch page as a browser with the tool would, up to the id_token form. */
async function launchThrough(
  pageUrl: string,
  nonce: string = randomUUID(),
): Promise<{ fields: Record<string, string>; html: string }> {
  const loginPage = await (await fetch(pageUrl)).text();
  const login = hiddenFields(loginPage);
  const auth = new URL(platform.authUrl);
  auth.search = new URLSearchParams({
    scope: "openid",
    response_type: "id_token",
    response_mode: "form_post",
    prompt: "none",
    client_id: login.client_id!,
    redirect_uri: tool.redirectUris[0]!,
    login_hint: login.login_hint!,
    lti_message_hint: login.lti_message_hint!,
    state: "state-1",
    nonce,
  }).toString();
  const answer = await fetch(auth);
  const html = await answer.text();
  expect(answer.status, html).toBe(200);
  return { fields: hiddenFields(html), html };
}

describe("launch", () => {
  it("posts the login initiation and answers /auth with an id_token carrying the LTI claims", async () => {
    const lineItem = platform.addLineItem("c1", { label: "Lab 1", scoreMaximum: 10 });
    const link = platform.addResourceLink("c1", {
      title: "Lab 1",
      custom: { lab: "lab-1" },
      lineItemId: lineItem.id,
    });
    const pageUrl = platform.launchUrl({ sub: "s1", courseId: "c1", resourceLinkId: link.id });
    const loginPage = await (await fetch(pageUrl)).text();
    expect(formAction(loginPage)).toBe(tool.loginUrl);
    expect(loginPage).toContain("<button");
    expect(hiddenFields(loginPage)).toMatchObject({
      iss: platform.issuer,
      login_hint: "s1",
      target_link_uri: tool.redirectUris[0],
      client_id: clientId,
      lti_deployment_id: deploymentId,
    });

    const { fields, html } = await launchThrough(pageUrl, "nonce-1");
    expect(formAction(html)).toBe(tool.redirectUris[0]);
    expect(fields.state).toBe("state-1");
    expect(platform.lastIdTokenForm()).toEqual({ action: tool.redirectUris[0], ...fields });
    const { payload } = await jwtVerify(fields.id_token!, createRemoteJWKSet(new URL(platform.jwksUrl)), {
      issuer: platform.issuer,
      audience: clientId,
    });
    expect(payload).toMatchObject({
      sub: "s1",
      nonce: "nonce-1",
      azp: clientId,
      email: "s1@school.test",
      [claim("message_type")]: "LtiResourceLinkRequest",
      [claim("version")]: "1.3.0",
      [claim("deployment_id")]: deploymentId,
      [claim("resource_link")]: { id: link.id, title: "Lab 1" },
      [claim("roles")]: [roles.learner],
      [claim("context")]: { id: "c1", title: "Networks 101" },
      [claim("custom")]: { lab: "lab-1" },
      [claim("lis")]: { course_section_sourcedid: "Section A" },
      "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": {
        lineitems: `${platform.url}/courses/c1/lineitems`,
        lineitem: lineItem.url,
      },
      "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": {
        context_memberships_url: `${platform.url}/courses/c1/memberships`,
      },
    });
    expect(payload.exp! - payload.iat!).toBe(300);
  });

  it("frames the launch when asked", async () => {
    const link = platform.addResourceLink("c1", { title: "Lab 1" });
    const framed = await (
      await fetch(platform.launchUrl({ sub: "s1", courseId: "c1", resourceLinkId: link.id, frame: true }))
    ).text();
    expect(framed).toMatch(/<iframe src="\/launches\/[^"]+"/);
  });

  it("refuses an authorization request that does not match what it issued", async () => {
    const link = platform.addResourceLink("c1", { title: "Lab 1" });
    const login = hiddenFields(
      await (await fetch(platform.launchUrl({ sub: "s1", courseId: "c1", resourceLinkId: link.id }))).text(),
    );
    const good = {
      scope: "openid",
      response_type: "id_token",
      response_mode: "form_post",
      prompt: "none",
      client_id: clientId,
      redirect_uri: tool.redirectUris[0]!,
      login_hint: login.login_hint!,
      lti_message_hint: login.lti_message_hint!,
      nonce: "n",
    };
    const tryAuth = (changes: Record<string, string>) =>
      fetch(platform.authUrl, form({ ...good, ...changes }));
    expect((await tryAuth({ redirect_uri: "http://evil.invalid/launch" })).status).toBe(400);
    expect((await tryAuth({ login_hint: "s2" })).status).toBe(403);
    expect((await tryAuth({ prompt: "login" })).status).toBe(400);
    expect((await tryAuth({ response_mode: "fragment" })).status).toBe(400);
    expect((await tryAuth({ lti_message_hint: "made-up" })).status).toBe(400);
    expect((await tryAuth({})).status).toBe(200);
  });

  it.each([
    ["forgedSignature", /signature/],
    ["wrongAudience", /aud/],
    ["expired", /exp/],
  ] as const)("tampers with a launch: %s", async (tamper, refusal) => {
    const link = platform.addResourceLink("c1", { title: "Lab 1" });
    const { fields } = await launchThrough(
      platform.launchUrl({ sub: "s1", courseId: "c1", resourceLinkId: link.id, tamper }),
    );
    await expect(
      jwtVerify(fields.id_token!, createRemoteJWKSet(new URL(platform.jwksUrl)), {
        issuer: platform.issuer,
        audience: clientId,
      }),
    ).rejects.toThrow(refusal);
  });

  it("names an unknown deployment when told to, as a quirk for every launch", async () => {
    platform.quirks.tamperLaunches = "unknownDeployment";
    const link = platform.addResourceLink("c1", { title: "Lab 1" });
    const { fields } = await launchThrough(
      platform.launchUrl({ sub: "s1", courseId: "c1", resourceLinkId: link.id }),
    );
    const { payload } = await jwtVerify(fields.id_token!, createRemoteJWKSet(new URL(platform.jwksUrl)));
    expect(payload[claim("deployment_id")]).not.toBe(deploymentId);
  });
});

describe("token endpoint", () => {
  it("grants only the LTI service scopes it knows", async () => {
    const answer = await requestToken(await assertion(), [
      ags.score,
      "https://example.test/scope/everything",
    ]);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ token_type: "Bearer", scope: ags.score });
  });

  it("refuses an assertion signed by a key outside the tool's JWKS", async () => {
    const stranger = await toolKey();
    const answer = await requestToken(await assertion({ key: stranger.privateKey, kid: key.kid }), [
      ags.score,
    ]);
    expect(answer.status).toBe(401);
    expect(await answer.json()).toMatchObject({ error: "invalid_client" });
  });

  it("refuses an assertion for another audience", async () => {
    const answer = await requestToken(await assertion({ audience: platform.issuer }), [ags.score]);
    expect(answer.status).toBe(401);
  });

  it("refuses a replayed jti", async () => {
    const once = await assertion({ jti: "jti-1" });
    expect((await requestToken(once, [ags.score])).status).toBe(200);
    const again = await requestToken(once, [ags.score]);
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ error_description: expect.stringMatching(/already used/) });
    expect(platform.tokenRequests().map((request) => request.status)).toEqual([200, 401]);
  });
});

describe("assignment and grade services", () => {
  const score = (userId: string, scoreGiven: number, timestamp: string) => ({
    userId,
    scoreGiven,
    scoreMaximum: 10,
    activityProgress: "Completed",
    gradingProgress: "FullyGraded",
    timestamp,
  });

  async function postScore(
    url: string,
    token: string,
    body: unknown,
    contentType = types.score,
  ): Promise<Response> {
    return fetch(`${url}/scores`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": contentType },
      body: JSON.stringify(body),
    });
  }

  async function createLineItem(token: string): Promise<{ id: string }> {
    const answer = await fetch(`${platform.url}/courses/c1/lineitems`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": types.lineItem, accept: types.lineItem },
      body: JSON.stringify({ label: "Lab 1", scoreMaximum: 10, resourceId: "lab-1", tag: "lab-console" }),
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.get("content-type")).toBe(types.lineItem);
    return (await answer.json()) as { id: string };
  }

  it("holds to the media types: Accept on reads, Content-Type on writes", async () => {
    const token = await accessToken();
    const lineItems = `${platform.url}/courses/c1/lineitems`;
    const auth = { authorization: `Bearer ${token}` };
    expect((await fetch(lineItems, { headers: auth })).status).toBe(406);
    const wrongType = await fetch(lineItems, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ label: "Lab 1", scoreMaximum: 10 }),
    });
    expect(wrongType.status).toBe(415);
    const item = await createLineItem(token);
    const listed = await fetch(`${lineItems}?resource_id=lab-1`, {
      headers: { ...auth, accept: types.container },
    });
    expect(listed.headers.get("content-type")).toBe(types.container);
    expect(await listed.json()).toEqual([
      expect.objectContaining({ id: item.id, label: "Lab 1", resourceId: "lab-1" }),
    ]);
    expect(
      await (
        await fetch(`${lineItems}?resource_id=other`, { headers: { ...auth, accept: types.container } })
      ).json(),
    ).toEqual([]);
    expect(
      (await postScore(item.id, token, score("s1", 8, new Date().toISOString()), "application/json")).status,
    ).toBe(415);
    expect((await fetch(lineItems, { headers: { accept: types.container } })).status).toBe(401);
  });

  it("keeps the newer score when an older timestamp arrives, and shows it in the gradebook", async () => {
    const token = await accessToken();
    const item = await createLineItem(token);
    expect((await postScore(item.id, token, score("s1", 8, "2030-01-01T10:00:00.000Z"))).status).toBe(204);
    expect((await postScore(item.id, token, score("s1", 3, "2030-01-01T09:00:00.000Z"))).status).toBe(204);
    expect(platform.results(item.id)).toEqual([expect.objectContaining({ userId: "s1", scoreGiven: 8 })]);
    expect(platform.scorePosts().map((post) => [post.status, post.note])).toEqual([
      [204, undefined],
      [204, "ignored: older timestamp"],
    ]);
    const results = await fetch(`${item.id}/results?user_id=s1`, {
      headers: { authorization: `Bearer ${token}`, accept: types.results },
    });
    expect(await results.json()).toEqual([
      expect.objectContaining({ userId: "s1", resultScore: 8, resultMaximum: 10, scoreOf: item.id }),
    ]);
    const gradebook = await (await fetch(platform.gradebookUrl("c1"))).text();
    expect(gradebook).toContain('<th scope="col">Lab 1</th>');
    expect(gradebook).toMatch(/Student 1<\/th><td>8 \/ 10<\/td>/);
  });

  it("validates a score: enrolled user, scoreMaximum with scoreGiven, a timestamp", async () => {
    const token = await accessToken();
    const item = await createLineItem(token);
    const now = new Date().toISOString();
    expect((await postScore(item.id, token, score("stranger", 8, now))).status).toBe(422);
    expect(
      (await postScore(item.id, token, { ...score("s1", 8, now), scoreMaximum: undefined })).status,
    ).toBe(400);
    expect((await postScore(item.id, token, { ...score("s1", 8, now), timestamp: "yesterday" })).status).toBe(
      400,
    );
  });

  it("answers with the quirks switched on: a 5xx, an unpublished course, a held answer", async () => {
    const token = await accessToken();
    const item = await createLineItem(token);
    platform.quirks.failScores = 1;
    const failed = await postScore(item.id, token, score("s1", 5, "2030-01-01T10:00:00.000Z"));
    expect(failed.status).toBe(503);
    expect(platform.results(item.id)).toEqual([]);

    platform.quirks.unpublishedCourseRefusal = true;
    platform.setPublished("c1", false);
    const refused = await postScore(item.id, token, score("s1", 5, "2030-01-01T10:00:00.000Z"));
    expect(refused.status).toBe(422);
    expect(await refused.json()).toEqual({
      errors: { type: "unprocessable_entity", message: expect.stringMatching(/not published/) },
    });
    platform.setPublished("c1", true);

    platform.quirks.holdScores = true;
    const held = postScore(item.id, token, score("s1", 6, "2030-01-01T11:00:00.000Z"));
    await expect.poll(() => platform.scorePosts().at(-1)?.status).toBe("held");
    expect(platform.results(item.id)).toEqual([expect.objectContaining({ scoreGiven: 6 })]);
    platform.releaseHeldScores();
    expect((await held).status).toBe(204);
    expect(platform.scorePosts().map((post) => post.status)).toEqual([503, 422, 204]);
  });

  it("keeps a held score when the tool goes away before the answer", async () => {
    const token = await accessToken();
    const item = await createLineItem(token);
    platform.quirks.holdScores = true;
    const gone = new AbortController();
    const post = fetch(`${item.id}/scores`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": types.score },
      body: JSON.stringify(score("s2", 7, "2030-01-01T10:00:00.000Z")),
      signal: gone.signal,
    });
    await expect.poll(() => platform.scorePosts().at(-1)?.status).toBe("held");
    gone.abort();
    await expect(post).rejects.toThrow();
    await expect.poll(() => platform.scorePosts().at(-1)?.status).toBe("closed");
    expect(platform.results(item.id)).toEqual([expect.objectContaining({ userId: "s2", scoreGiven: 7 })]);
  });

  it("lists each line item twice when the duplicate quirk is on", async () => {
    const token = await accessToken();
    const item = await createLineItem(token);
    platform.quirks.duplicateLineItemsVisible = true;
    const listed = await fetch(`${platform.url}/courses/c1/lineitems`, {
      headers: { authorization: `Bearer ${token}`, accept: types.container },
    });
    expect((await listed.json()) as Array<{ id: string }>).toEqual([
      expect.objectContaining({ id: item.id }),
      expect.objectContaining({ id: item.id }),
    ]);
  });
});

describe("names and role provisioning", () => {
  async function members(
    url: string,
    token: string,
  ): Promise<{ body: { members: Array<Record<string, unknown>> }; next?: string }> {
    const answer = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: types.members } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe(types.members);
    const next = /<([^>]+)>;\s*rel="next"/.exec(answer.headers.get("link") ?? "")?.[1];
    return { body: (await answer.json()) as { members: Array<Record<string, unknown>> }, next };
  }

  async function allPages(url: string, token: string): Promise<{ userIds: unknown[]; pages: number }> {
    const userIds: unknown[] = [];
    let pages = 0;
    for (let next: string | undefined = url; next; pages++) {
      const page = await members(next, token);
      userIds.push(...page.body.members.map((member) => member.user_id));
      next = page.next;
    }
    return { userIds, pages };
  }

  it("pages by limit with Link rel=next, and by the platform's own page size", async () => {
    const token = await accessToken([nrpsScope]);
    const url = `${platform.url}/courses/c1/memberships`;
    const everyone = ["teacher", "s1", "s2", "s3", "s4", "s5"];
    expect(await allPages(`${url}?limit=4`, token)).toEqual({ userIds: everyone, pages: 2 });
    expect(await allPages(url, token)).toEqual({ userIds: everyone, pages: 1 });
    platform.quirks.nrpsPageSize = 2;
    expect(await allPages(url, token)).toEqual({ userIds: everyone, pages: 3 });
  });

  it("gives each member's status, roles and sections", async () => {
    const token = await accessToken([nrpsScope]);
    const { body } = await members(`${platform.url}/courses/c1/memberships?role=Learner`, token);
    expect(body).toMatchObject({ context: { id: "c1", title: "Networks 101" } });
    expect(body.members[0]).toMatchObject({
      status: "Active",
      user_id: "s1",
      name: "Student 1",
      email: "s1@school.test",
      roles: [roles.learner],
      group_enrollments: [{ group_id: "Section A" }],
    });
    expect(body.members).toHaveLength(5);
  });

  it("refuses a token without the membership scope", async () => {
    const token = await accessToken([ags.score]);
    const answer = await fetch(`${platform.url}/courses/c1/memberships`, {
      headers: { authorization: `Bearer ${token}`, accept: types.members },
    });
    expect(answer.status).toBe(403);
  });
});

describe("deep linking", () => {
  async function deepLinkingRequest(): Promise<Record<string, unknown>> {
    const { fields } = await launchThrough(platform.deepLinkingLaunchUrl({ sub: "teacher", courseId: "c1" }));
    const { payload } = await jwtVerify(fields.id_token!, createRemoteJWKSet(new URL(platform.jwksUrl)));
    expect(payload[claim("message_type")]).toBe("LtiDeepLinkingRequest");
    return payload["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] as Record<
      string,
      unknown
    >;
  }

  function deepLinkingResponse(
    settings: Record<string, unknown>,
    signingKey: CryptoKey = key.privateKey,
  ): Promise<string> {
    return new SignJWT({
      nonce: randomUUID(),
      [claim("message_type")]: "LtiDeepLinkingResponse",
      [claim("version")]: "1.3.0",
      [claim("deployment_id")]: deploymentId,
      "https://purl.imsglobal.org/spec/lti-dl/claim/data": settings.data,
      "https://purl.imsglobal.org/spec/lti-dl/claim/content_items": [
        {
          type: "ltiResourceLink",
          title: "Routing lab",
          url: "http://tool.invalid/launch",
          custom: { lab: "routing" },
          lineItem: { label: "Routing lab", scoreMaximum: 10, resourceId: "routing", tag: "lab-console" },
        },
      ],
    })
      .setProtectedHeader({ alg: "RS256", kid: key.kid })
      .setIssuer(clientId)
      .setAudience(platform.issuer)
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(signingKey);
  }

  it("asks for ltiResourceLinks and adds what the tool returns, with its line item", async () => {
    const settings = await deepLinkingRequest();
    expect(settings).toMatchObject({
      deep_link_return_url: `${platform.url}/deep-links/return`,
      accept_types: ["ltiResourceLink"],
      accept_multiple: true,
    });
    const answer = await fetch(
      settings.deep_link_return_url as string,
      form({ JWT: await deepLinkingResponse(settings) }),
    );
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("Added: Routing lab");
    const [link] = platform.resourceLinks("c1");
    expect(link).toMatchObject({ title: "Routing lab", custom: { lab: "routing" } });
    expect(platform.lineItems("c1")).toEqual([
      expect.objectContaining({
        label: "Routing lab",
        resourceId: "routing",
        tag: "lab-console",
        resourceLinkId: link!.id,
      }),
    ]);
  });

  it("refuses a forged answer and one that echoes no request, adding nothing", async () => {
    const settings = await deepLinkingRequest();
    const stranger = await toolKey();
    const forged = await fetch(
      `${platform.url}/deep-links/return`,
      form({ JWT: await deepLinkingResponse(settings, stranger.privateKey) }),
    );
    expect(forged.status).toBe(400);
    const unasked = await fetch(
      `${platform.url}/deep-links/return`,
      form({ JWT: await deepLinkingResponse({ data: "made-up" }) }),
    );
    expect(unasked.status).toBe(400);
    expect(platform.resourceLinks("c1")).toEqual([]);
    const good = await deepLinkingResponse(settings);
    expect((await fetch(`${platform.url}/deep-links/return`, form({ JWT: good }))).status).toBe(200);
    expect((await fetch(`${platform.url}/deep-links/return`, form({ JWT: good }))).status).toBe(400);
    expect(platform.resourceLinks("c1")).toHaveLength(1);
  });
});

describe("dynamic registration", () => {
  it("hands out its configuration and registers a tool once per token", async () => {
    const start = new URL(platform.registrationStartUrl("http://tool.invalid/register?x=1"));
    expect(start.searchParams.get("x")).toBe("1");
    const config = (await (await fetch(start.searchParams.get("openid_configuration")!)).json()) as Record<
      string,
      unknown
    >;
    expect(config).toMatchObject({
      issuer: platform.issuer,
      token_endpoint: platform.tokenUrl,
      jwks_uri: platform.jwksUrl,
      "https://purl.imsglobal.org/spec/lti-platform-configuration": { messages_supported: expect.any(Array) },
    });
    const registration = {
      application_type: "web",
      grant_types: ["implicit", "client_credentials"],
      response_types: ["id_token"],
      initiate_login_uri: "http://tool2.invalid/login",
      redirect_uris: ["http://tool2.invalid/launch"],
      client_name: "Lab Console",
      jwks_uri: tool.jwksUrl,
      token_endpoint_auth_method: "private_key_jwt",
      scope: `${ags.score} ${nrpsScope}`,
      "https://purl.imsglobal.org/spec/lti-tool-configuration": {
        domain: "tool2.invalid",
        target_link_uri: "http://tool2.invalid/launch",
        messages: [{ type: "LtiDeepLinkingRequest", target_link_uri: "http://tool2.invalid/deep-link" }],
      },
    };
    const post = () =>
      fetch(config.registration_endpoint as string, {
        method: "POST",
        headers: {
          authorization: `Bearer ${start.searchParams.get("registration_token")}`,
          "content-type": "application/json",
        },
        body: JSON.stringify(registration),
      });
    const answer = await post();
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as Record<string, unknown>;
    const deployment = (
      body["https://purl.imsglobal.org/spec/lti-tool-configuration"] as { deployment_id: string }
    ).deployment_id;
    expect(platform.registeredTools().at(-1)).toMatchObject({
      clientId: body.client_id,
      deploymentId: deployment,
      loginUrl: "http://tool2.invalid/login",
      deepLinkingUrl: "http://tool2.invalid/deep-link",
    });
    expect((await post()).status).toBe(401);
  });
});
