// Launches from a test LMS that follows the 1EdTech specs, into a real BFF on the emulator, driven
// like a browser: who a launch signs in and where it lands, a launch in a frame, deep linking (in a
// frame, without a cookie), dynamic registration with its approval, and every hostile launch refused
// with nobody signed in.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Me } from "../../../common/api.ts";
import { CookieJarClient, type Visit } from "../../auth/oidc/testing/cookie-jar-client.ts";
import { aCheck, aGradingLab } from "../../grading/testing/grading-fixtures.ts";
import { startTestBff, type TestBff } from "../../testing/test-bff.ts";
import { configuredPlatform, startCoursePlatform } from "../testing/lti-setup.ts";
import type { TestPlatform } from "../testing/test-platform.ts";
import { freePort } from "../../testing/free-port.ts";

const lab = aGradingLab([aCheck({ id: "file", run: "test -f done", points: 3 })], {
  id: "lab-one",
  title: "Lab one",
});
const otherLab = aGradingLab([aCheck({ id: "x", run: "true", points: 2 })], {
  id: "lab-two",
  title: "Lab two",
});

let platform: TestPlatform;
let bff: TestBff;
let consoleUrl: string;
let clock = Date.now();

beforeAll(async () => {
  const port = await freePort();
  consoleUrl = `http://127.0.0.1:${port}`;
  platform = await startCoursePlatform(consoleUrl, lab.id);
  bff = await startTestBff({
    labs: [lab, otherLab],
    port,
    publicUrl: consoleUrl,
    now: () => new Date(clock),
    lti: { platforms: [configuredPlatform(platform)], dynamicRegistration: true },
  });
});
afterAll(async () => {
  await bff?.close();
  await platform?.close();
});

/** Opens the platform's launch page and goes where its forms and redirects lead. */
async function launch(
  browser: CookieJarClient,
  url: string,
  launchHeaders: Record<string, string> = {},
): Promise<Visit> {
  const launchPage = await browser.visit(url);
  // The login initiation, then /auth's form_post page; a login refused at once stays at the console.
  const atPlatform = await browser.submitForm(launchPage, {});
  return atPlatform.url.startsWith(consoleUrl)
    ? atPlatform
    : submitLaunch(browser, atPlatform, launchHeaders);
}

async function submitLaunch(
  browser: CookieJarClient,
  formPost: Visit,
  headers: Record<string, string> = {},
): Promise<Visit> {
  const fields = Object.fromEntries(
    [...formPost.body.matchAll(/<input\b[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)].map(([, name, value]) => [
      name,
      value,
    ]),
  );
  const action = /<form\b[^>]*action="([^"]+)"/.exec(formPost.body)?.[1];
  if (!action) throw new Error(`no form_post form in:\n${formPost.body}`);
  return browser.visit(new URL(action.replace(/&amp;/g, "&"), formPost.url).href, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields as Record<string, string>),
  });
}

async function me(browser: CookieJarClient): Promise<Me | number> {
  const response = await browser.request(`${consoleUrl}/api/me`);
  return response.status === 200 ? Me.parse(await response.json()) : response.status;
}

const pathOf = (visit: Visit) => {
  const url = new URL(visit.url);
  return `${url.pathname}${url.search}`;
};

describe("a launch from the LMS", () => {
  it("signs a learner in by their email, in their section, on the lab the link points at", async () => {
    const browser = new CookieJarClient();
    const landed = await launch(
      browser,
      platform.launchUrl({ sub: "u-stella", courseId: "cs101", resourceLinkId: "link-lab" }),
    );
    expect(pathOf(landed)).toBe("/?lab=lab-one");
    expect(landed.trail.some((step) => step.startsWith(`${consoleUrl}/api/lti/continue?ticket=`))).toBe(true);
    expect(await me(browser)).toEqual({
      username: "stella@example.edu",
      role: "student",
      sections: ["section-a"],
    });
  });

  it("signs a TA in to the lab's wall and an instructor to its grading, by the LMS's roles", async () => {
    const ta = new CookieJarClient();
    expect(
      pathOf(
        await launch(
          ta,
          platform.launchUrl({ sub: "u-tomas", courseId: "cs101", resourceLinkId: "link-lab" }),
        ),
      ),
    ).toBe("/labs/lab-one/wall");
    expect(await me(ta)).toEqual({ username: "tomas@example.edu", role: "ta", sections: ["section-b"] });
    const instructor = new CookieJarClient();
    expect(
      pathOf(
        await launch(
          instructor,
          platform.launchUrl({ sub: "u-ines", courseId: "cs101", resourceLinkId: "link-lab" }),
        ),
      ),
    ).toBe("/grading/lab-one");
    expect(await me(instructor)).toEqual({ username: "ines@example.edu", role: "instructor", sections: [] });
  });

  it("in a frame, offers a new window instead of relying on a third-party cookie, and signs in there", async () => {
    const browser = new CookieJarClient();
    const framed = await launch(
      browser,
      platform.launchUrl({ sub: "u-otto", courseId: "cs101", resourceLinkId: "link-lab" }),
      { "sec-fetch-dest": "iframe" },
    );
    expect(framed.response.status).toBe(200);
    expect(framed.body).toContain("Open Lab Console in a new window");
    expect(framed.response.headers.get("content-security-policy")).toContain("frame-ancestors *");
    expect(framed.response.headers.get("x-frame-options")).toBeNull();
    expect(framed.response.headers.getSetCookie()).toEqual([]);
    const link = /href="([^"]+)" target="_blank"/.exec(framed.body)?.[1]?.replace(/&#38;/g, "&");
    const window = new CookieJarClient();
    const landed = await window.visit(new URL(link!, consoleUrl).href);
    expect(pathOf(landed)).toBe("/?lab=lab-one");
    expect(await me(window)).toMatchObject({ username: "otto@example.edu", role: "student" });
    // The ticket worked once.
    const again = await new CookieJarClient().visit(new URL(link!, consoleUrl).href);
    expect(pathOf(again)).toBe("/sign-in?error=expired");
  });
});

describe("a hostile launch is refused and signs nobody in", () => {
  for (const tamper of ["forgedSignature", "wrongAudience", "unknownDeployment", "expired"] as const) {
    it(`with ${tamper}`, async () => {
      const browser = new CookieJarClient();
      const landed = await launch(
        browser,
        platform.launchUrl({ sub: "u-stella", courseId: "cs101", resourceLinkId: "link-lab", tamper }),
      );
      expect(pathOf(landed)).toBe("/sign-in?error=lti-refused");
      expect(await me(browser)).toBe(401);
    });
  }

  it("when its id_token is posted again, with the same state or a fresh one", async () => {
    await launch(
      new CookieJarClient(),
      platform.launchUrl({ sub: "u-stella", courseId: "cs101", resourceLinkId: "link-lab" }),
    );
    const used = platform.lastIdTokenForm()!;
    const replayer = new CookieJarClient();
    const replayed = await replayer.visit(used.action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ id_token: used.id_token, state: used.state }),
    });
    expect(pathOf(replayed)).toBe("/sign-in?error=lti-refused");
    // A login of the attacker's own gives a fresh state, whose nonce the old token does not carry.
    const login = await replayer.request(
      `${consoleUrl}/api/lti/login?${new URLSearchParams({ iss: platform.issuer, login_hint: "u-stella", target_link_uri: `${consoleUrl}/api/lti/launch`, client_id: "lab-console-test" })}`,
    );
    const state = new URL(login.headers.get("location")!).searchParams.get("state")!;
    const withFreshState = await replayer.visit(used.action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ id_token: used.id_token, state }),
    });
    expect(pathOf(withFreshState)).toBe("/sign-in?error=lti-refused");
    expect(await me(replayer)).toBe(401);
  });

  it("when its login's state expired", async () => {
    const browser = new CookieJarClient();
    const launchPage = await browser.visit(
      platform.launchUrl({ sub: "u-stella", courseId: "cs101", resourceLinkId: "link-lab" }),
    );
    const formPost = await browser.submitForm(launchPage, {});
    clock += 11 * 60_000;
    const landed = await submitLaunch(browser, formPost);
    expect(pathOf(landed)).toBe("/sign-in?error=lti-refused");
    expect(await me(browser)).toBe(401);
  });

  it("when the login's target is not even an address", async () => {
    const landed = await new CookieJarClient().visit(
      `${consoleUrl}/api/lti/login?${new URLSearchParams({ iss: platform.issuer, login_hint: "u-stella", target_link_uri: "http://[", client_id: "lab-console-test" })}`,
    );
    expect(pathOf(landed)).toBe("/sign-in?error=lti-refused");
  });

  it("when the login names an LMS the console does not know", async () => {
    const browser = new CookieJarClient();
    const landed = await browser.visit(
      `${consoleUrl}/api/lti/login?${new URLSearchParams({ iss: "https://lms.elsewhere.example", login_hint: "x", target_link_uri: `${consoleUrl}/api/lti/launch` })}`,
    );
    expect(pathOf(landed)).toBe("/sign-in?error=lti-platform-unknown");
  });
});

describe("deep linking", () => {
  /** The picker's request id the launch landed on. */
  const requestIdOf = (landed: Visit) => /^\/lti\/deep-links\/([\w-]{43})$/.exec(pathOf(landed))?.[1];

  it("works inside the LMS's frame without a cookie: the picker, the choice, and the answer posted to the LMS from the frame", async () => {
    // The frame: a browser that gets no cookie of Lab Console's, as Safari and Firefox treat a frame.
    const frame = new CookieJarClient();
    const landed = await launch(frame, platform.deepLinkingLaunchUrl({ sub: "u-ines", courseId: "cs101" }), {
      "sec-fetch-dest": "iframe",
    });
    const id = requestIdOf(landed);
    expect(id).toBeDefined();
    expect(landed.trail.some((step) => step.includes("/api/lti/continue"))).toBe(false);
    expect(await me(frame)).toBe(401);

    const request = await fetch(`${consoleUrl}/api/lti/deep-links/${id}`);
    expect(request.status).toBe(200);
    const offer = (await request.json()) as {
      platformName: string;
      courseTitle: string;
      labs: { id: string }[];
    };
    expect(offer).toMatchObject({ platformName: "Test LMS", courseTitle: "CS 101: Systems" });
    expect(offer.labs.map((each) => each.id)).toEqual(["lab-one", "lab-two"]);

    const answer = await frame.postApi(`${consoleUrl}/api/lti/deep-links/${id}`, {
      labIds: ["lab-two"],
      postSelfChecks: true,
    });
    expect(answer.status).toBe(200);
    const { answerUrl } = (await answer.json()) as { answerUrl: string };
    const page = await frame.visit(new URL(answerUrl, consoleUrl).href);
    expect(page.response.status).toBe(200);
    const policy = page.response.headers.get("content-security-policy");
    expect(policy).toContain(`form-action ${platform.url}`);
    expect(policy).toContain("frame-ancestors *");
    expect(page.response.headers.get("x-frame-options")).toBeNull();
    const back = await frame.submitForm(page, {});
    expect(back.body).toContain("Added: Lab two");
    const link = platform.resourceLinks("cs101").find((each) => each.title === "Lab two");
    expect(link?.custom).toEqual({ lab: "lab-two", post_self_checks: "true" });
    expect(platform.lineItems("cs101")).toContainEqual(
      expect.objectContaining({
        label: "Lab two",
        resourceId: "lab-two",
        tag: "lab-console",
        scoreMaximum: 2,
      }),
    );

    // The audit names the instructor whose launch it was, though nobody signed in.
    const ivan = await bff.signIn("ivan");
    const audit = (await ivan.get("/api/audit?action=lti-deep-link")).body.items as {
      actor: string;
      actorRole: string;
    }[];
    expect(audit[0]).toMatchObject({ actor: "ines@example.edu", actorRole: "instructor" });
  });

  it("adds a lab again as a second link to the column it has, never a second column", async () => {
    const columnsOf = (labId: string) =>
      platform.lineItems("cs101").filter((each) => each.resourceId === labId);
    expect(columnsOf("lab-two")).toHaveLength(1);
    const window = new CookieJarClient();
    const id = requestIdOf(
      await launch(window, platform.deepLinkingLaunchUrl({ sub: "u-ines", courseId: "cs101" })),
    );
    const answer = await window.postApi(`${consoleUrl}/api/lti/deep-links/${id}`, {
      labIds: ["lab-two"],
      postSelfChecks: false,
    });
    const { answerUrl } = (await answer.json()) as { answerUrl: string };
    const back = await window.submitForm(await window.visit(new URL(answerUrl, consoleUrl).href), {});
    expect(back.body).toContain("Added: Lab two");
    expect(platform.resourceLinks("cs101").filter((each) => each.title === "Lab two")).toHaveLength(2);
    expect(columnsOf("lab-two")).toHaveLength(1);
  });

  it("goes to the picker from a launch at top level too, and signs nobody in", async () => {
    const window = new CookieJarClient();
    const landed = await launch(window, platform.deepLinkingLaunchUrl({ sub: "u-ines", courseId: "cs101" }));
    expect(requestIdOf(landed)).toBeDefined();
    expect(await me(window)).toBe(401);
  });

  it("knows no request by a wrong id, nor by one used already", async () => {
    const frame = new CookieJarClient();
    const landed = await launch(frame, platform.deepLinkingLaunchUrl({ sub: "u-ines", courseId: "cs101" }), {
      "sec-fetch-dest": "iframe",
    });
    const id = requestIdOf(landed)!;
    const wrong = `${id.slice(0, -1)}${id.endsWith("A") ? "B" : "A"}`;
    const choice = { labIds: ["lab-one"], postSelfChecks: false };
    expect((await fetch(`${consoleUrl}/api/lti/deep-links/${wrong}`)).status).toBe(404);
    expect((await frame.postApi(`${consoleUrl}/api/lti/deep-links/${wrong}`, choice)).status).toBe(404);
    expect((await fetch(`${consoleUrl}/api/lti/deep-link-answers/${wrong}`)).status).toBe(404);

    const answer = await frame.postApi(`${consoleUrl}/api/lti/deep-links/${id}`, choice);
    const { answerUrl } = (await answer.json()) as { answerUrl: string };
    expect((await fetch(new URL(answerUrl, consoleUrl))).status).toBe(200);
    // Used: the same request cannot add labs twice, nor its answer be posted twice.
    expect((await fetch(`${consoleUrl}/api/lti/deep-links/${id}`)).status).toBe(404);
    expect((await frame.postApi(`${consoleUrl}/api/lti/deep-links/${id}`, choice)).status).toBe(404);
    expect((await fetch(new URL(answerUrl, consoleUrl))).status).toBe(404);
  });

  it("refuses a deep-linking launch by a learner, at top level and in a frame", async () => {
    const browser = new CookieJarClient();
    const landed = await launch(
      browser,
      platform.deepLinkingLaunchUrl({ sub: "u-stella", courseId: "cs101" }),
    );
    expect(pathOf(landed)).toBe("/sign-in?error=lti-refused");
    expect(await me(browser)).toBe(401);
    const framed = await launch(
      new CookieJarClient(),
      platform.deepLinkingLaunchUrl({ sub: "u-stella", courseId: "cs101" }),
      { "sec-fetch-dest": "iframe" },
    );
    expect(framed.response.status).toBe(403);
    expect(framed.body).toContain("Lab Console could not accept this launch from your course.");
  });
});

describe("dynamic registration", () => {
  it("registers the console at an LMS, which signs nobody in until an instructor approves it", async () => {
    const admin = new CookieJarClient();
    const registered = await admin.visit(platform.registrationStartUrl(`${consoleUrl}/api/lti/register`));
    expect(registered.response.status).toBe(200);
    expect(registered.body).toContain("Lab Console is registered with");
    // Its button tells the LMS the registration is done, as Dynamic Registration asks.
    expect(registered.body).toContain('<script src="/api/lti/registration-close.js"></script>');
    const close = await (await fetch(`${consoleUrl}/api/lti/registration-close.js`)).text();
    expect(close).toContain('postMessage({ subject: "org.imsglobal.lti.close" }, "*")');
    const [tool] = platform.registeredTools().filter((each) => each.clientId !== "lab-console-test");
    expect(tool).toBeDefined();

    const ivan = await bff.signIn("ivan");
    const listed = (await ivan.get("/api/lti/platforms")).body.items as {
      id: string;
      status: string;
      clientId: string;
    }[];
    const pending = listed.find((each) => each.clientId === tool!.clientId);
    expect(pending?.status).toBe("pending");

    platform.addResourceLink("cs101", {
      id: "link-dyn",
      title: "Lab 1 again",
      custom: { lab: lab.id },
      clientId: tool!.clientId,
    });
    const refused = await launch(
      new CookieJarClient(),
      platform.launchUrl({ sub: "u-stella", courseId: "cs101", resourceLinkId: "link-dyn" }),
    );
    expect(pathOf(refused)).toBe("/sign-in?error=lti-platform-pending");

    expect(
      (await bff.signIn("alice").then((alice) => alice.post(`/api/lti/platforms/${pending!.id}/approve`)))
        .status,
    ).toBe(403);
    // An instructor an LMS signed in may not let another LMS sign people in.
    const ines = new CookieJarClient();
    platform.addResourceLink("cs101", {
      id: "link-configured",
      title: "Lab 1 once more",
      custom: { lab: lab.id },
      clientId: "lab-console-test",
    });
    await launch(
      ines,
      platform.launchUrl({ sub: "u-ines", courseId: "cs101", resourceLinkId: "link-configured" }),
    );
    expect(await me(ines)).toMatchObject({ role: "instructor" });
    const fromLms = await ines.postApi(`${consoleUrl}/api/lti/platforms/${pending!.id}/approve`);
    expect(fromLms.status).toBe(403);
    expect(((await fromLms.json()) as { error: { reason: string } }).error.reason).toBe(
      "lti_approve_from_lms",
    );
    expect((await ivan.post(`/api/lti/platforms/${pending!.id}/approve`)).body.status).toBe("active");
    const student = new CookieJarClient();
    const landed = await launch(
      student,
      platform.launchUrl({ sub: "u-stella", courseId: "cs101", resourceLinkId: "link-dyn" }),
    );
    expect(pathOf(landed)).toBe("/?lab=lab-one");
    // A platform that registered itself speaks for no email domain: people are named by their ids there.
    expect(await me(student)).toMatchObject({ username: `u-stella@${pending!.id}` });
  });

  it("refuses a look-alike issuer and a registration sent to another site, and tells the visitor nothing it read", async () => {
    // An LMS configuration of someone's making, served beside a secret the console must not repeat.
    let configuration: Record<string, unknown> = {};
    const server = createServer((request, response) => {
      const body = request.url?.startsWith("/.well-known")
        ? JSON.stringify(configuration)
        : "INTERNAL-SECRET-abc123";
      response.writeHead(request.url?.startsWith("/.well-known") ? 200 : 500, {
        "content-type": "application/json",
      });
      response.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const here = `http://127.0.0.1:${port}`;
    const register = () =>
      new CookieJarClient().visit(
        `${consoleUrl}/api/lti/register?${new URLSearchParams({ openid_configuration: `${here}/.well-known/openid-configuration` })}`,
      );
    const lmsParts = (issuer: string, registration: string) => ({
      issuer,
      authorization_endpoint: `${here}/auth`,
      token_endpoint: `${here}/token`,
      jwks_uri: `${here}/jwks`,
      registration_endpoint: registration,
      "https://purl.imsglobal.org/spec/lti-platform-configuration": { product_family_code: "moodle" },
    });
    try {
      const before = platform.registeredTools().length;
      // "http://127.0.0.1:<port minus its last digit>" is a prefix of the address's text, not its issuer.
      configuration = lmsParts(here.slice(0, -1), `${here}/register`);
      const lookalike = await register();
      expect(lookalike.response.status).toBe(400);
      configuration = lmsParts(here, `${platform.url}/register`);
      const elsewhere = await register();
      expect(elsewhere.response.status).toBe(400);
      configuration = lmsParts(here, `${here}/register`);
      const failing = await register();
      expect(failing.response.status).toBe(400);
      expect(failing.body).toContain("Nothing was registered");
      expect(failing.body).not.toContain("INTERNAL-SECRET");
      expect(platform.registeredTools()).toHaveLength(before);
      const ivan = await bff.signIn("ivan");
      const issuers = ((await ivan.get("/api/lti/platforms")).body.items as { issuer: string }[]).map(
        (each) => each.issuer,
      );
      expect(issuers).not.toContain(here.slice(0, -1));
    } finally {
      server.close();
    }
  });

  it("refuses a configuration address that is not https", async () => {
    const answer = await new CookieJarClient().visit(
      `${consoleUrl}/api/lti/register?${new URLSearchParams({ openid_configuration: "http://lms.example.edu/.well-known/openid-configuration" })}`,
    );
    expect(answer.response.status).toBe(400);
    expect(answer.body).toContain("Nothing was registered");
  });
});

describe("the tool's keys", () => {
  it("are public at /api/lti/jwks without their private halves", async () => {
    const { keys } = (await (await fetch(`${consoleUrl}/api/lti/jwks`)).json()) as {
      keys: Record<string, unknown>[];
    };
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(Object.keys(key).sort()).toEqual(["alg", "e", "kid", "kty", "n", "use"]);
  });
});
