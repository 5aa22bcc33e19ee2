// Login CSRF: someone's own launch, its form posted from another browser, must not sign that
// browser in as them. Over https (here: behind a proxy that says so) the login leaves a cookie the
// top-level launch must bring; a framed launch without it signs in only once the person confirms.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Me } from "../../../common/api.ts";
import { CookieJarClient, type Visit } from "../../auth/oidc/testing/cookie-jar-client.ts";
import { aCheck, aGradingLab } from "../../grading/testing/grading-fixtures.ts";
import { startTestBff, type TestBff } from "../../testing/test-bff.ts";
import { configuredPlatform, startCoursePlatform } from "../testing/lti-setup.ts";
import type { TestPlatform } from "../testing/test-platform.ts";
import { freePort } from "../../testing/free-port.ts";

const lab = aGradingLab([aCheck({ id: "file", run: "true" })], { id: "lab-one", title: "Lab one" });
const overTls = { "x-forwarded-proto": "https" };

let platform: TestPlatform;
let bff: TestBff;
let consoleUrl: string;

beforeAll(async () => {
  const port = await freePort();
  consoleUrl = `http://127.0.0.1:${port}`;
  platform = await startCoursePlatform(consoleUrl, lab.id);
  bff = await startTestBff({
    labs: [lab],
    port,
    publicUrl: consoleUrl,
    trustProxy: { kind: "hops", hops: 1 },
    lti: { platforms: [configuredPlatform(platform)], dynamicRegistration: false },
  });
});
afterAll(async () => {
  await bff?.close();
  await platform?.close();
});

const formOf = (page: Visit) => {
  const action = /<form\b[^>]*action="([^"]+)"/.exec(page.body)?.[1]?.replace(/&amp;/g, "&");
  const fields = Object.fromEntries(
    [...page.body.matchAll(/<input\b[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)].map(([, name, value]) => [
      name!,
      value!.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))),
    ]),
  );
  return { action: new URL(action!, page.url).href, fields };
};

const post = (
  browser: CookieJarClient,
  form: { action: string; fields: Record<string, string> },
  headers = {},
) =>
  browser.request(form.action, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...overTls, ...headers },
    body: new URLSearchParams(form.fields),
  });

/** Up to the LMS's form_post page, the login made by `browser` over https. */
async function loginUpToTheLaunchForm(browser: CookieJarClient) {
  const launchPage = await browser.visit(
    platform.launchUrl({ sub: "u-stella", courseId: "cs101", resourceLinkId: "link-lab" }),
  );
  const login = await post(browser, formOf(launchPage));
  expect(login.status).toBe(302);
  return formOf(await browser.visit(login.headers.get("location")!));
}

async function me(browser: CookieJarClient): Promise<Me | number> {
  const response = await browser.request(`${consoleUrl}/api/me`);
  return response.status === 200 ? Me.parse(await response.json()) : response.status;
}

describe("a launch over https", () => {
  it("signs in the browser whose login started it", async () => {
    const browser = new CookieJarClient();
    const launched = await post(browser, await loginUpToTheLaunchForm(browser));
    expect(launched.status).toBe(303);
    const signedIn = await browser.request(new URL(launched.headers.get("location")!, consoleUrl).href, {
      headers: overTls,
    });
    expect(signedIn.status).toBe(303);
    expect(await me(browser)).toMatchObject({ username: "stella@example.edu" });
  });

  it("refuses, at top level, the launch form of someone else's login", async () => {
    const attacker = new CookieJarClient();
    const form = await loginUpToTheLaunchForm(attacker);
    const victim = new CookieJarClient();
    const launched = await post(victim, form);
    expect(launched.status).toBe(302);
    expect(launched.headers.get("location")).toBe("/sign-in?error=lti-refused");
    expect(await me(victim)).toBe(401);
  });

  it("in a frame without the login's cookie, asks the person to confirm the name before signing in", async () => {
    const attacker = new CookieJarClient();
    const form = await loginUpToTheLaunchForm(attacker);
    const victim = new CookieJarClient();
    const framed = await post(victim, form, { "sec-fetch-dest": "iframe" });
    expect(framed.status).toBe(200);
    const link = /href="([^"]+)" target="_blank"/.exec(await framed.text())?.[1]?.replace(/&#38;/g, "&");
    const confirm = await victim.visit(new URL(link!, consoleUrl).href);
    expect(confirm.body).toContain(
      "You are signing in as stella@example.edu, from CS 101: Systems at Test LMS",
    );
    expect(confirm.response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(confirm.response.headers.get("x-frame-options")).toBe("DENY");
    expect(await me(victim)).toBe(401);

    // Posted from another site, the confirmation counts for nothing.
    const forged = await post(victim, formOf(confirm), { origin: "https://evil.example" });
    expect(forged.status).toBe(302);
    expect(await me(victim)).toBe(401);
    // The person's own click, from this console's page.
    const confirmed = await post(victim, formOf(confirm), { origin: consoleUrl });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get("location")).toBe("/?lab=lab-one");
    expect(await me(victim)).toMatchObject({ username: "stella@example.edu" });
  });
});
