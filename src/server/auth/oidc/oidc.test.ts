// Sign-in through a real OpenID Connect provider (oidc-provider on loopback), driven like a browser:
// the authorization code flow with PKCE, state and nonce, roles and sections from groups, and sign-out
// at both ends.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthConfig, LogoutResult, Me } from "../../../common/api.ts";
import { startTestBff, type TestBff } from "../../testing/test-bff.ts";
import { createOidcAuthenticator } from "./oidc-authenticator.ts";
import { readOidcSettings } from "./oidc-config.ts";
import { CookieJarClient, type Visit } from "./testing/cookie-jar-client.ts";
import { startTestProvider, type TestAccount, type TestProvider } from "./testing/test-provider.ts";
import { freePort } from "../../testing/free-port.ts";

const accounts: TestAccount[] = [
  { username: "irene", password: "irene-pw", groups: ["course-staff"] },
  { username: "theo", password: "theo-pw", groups: ["course-tas", "everyone", "course-section-b"] },
  {
    username: "sam",
    password: "sam-pw",
    groups: ["course-students", "course-section-a", "course-section-NO"],
  },
  { username: "olga", password: "olga-pw", groups: ["other-course"] },
];
const roleGroups = { instructor: ["course-staff"], ta: ["course-tas"], student: ["course-students"] };

let provider: TestProvider;
let bff: TestBff;

beforeAll(async () => {
  // The provider must know the console's callback URL before the console listens.
  const port = await freePort();
  const consoleUrl = `http://127.0.0.1:${port}`;
  provider = await startTestProvider({
    accounts,
    client: {
      clientId: "lab-console",
      clientSecret: "a-client-secret",
      redirectUri: `${consoleUrl}/api/auth/oidc/callback`,
      postLogoutRedirectUri: `${consoleUrl}/sign-in`,
    },
  });
  const { settings, problems } = readOidcSettings({
    OIDC_ISSUER_URL: provider.issuer,
    OIDC_CLIENT_ID: "lab-console",
    OIDC_CLIENT_SECRET: "a-client-secret",
    PUBLIC_URL: consoleUrl,
    OIDC_SCOPES: "openid profile groups",
    OIDC_ROLE_GROUPS: JSON.stringify(roleGroups),
    OIDC_SECTION_GROUP_PREFIX: "course-section-",
    OIDC_PROVIDER_NAME: "Test University",
  });
  expect(problems).toEqual([]);
  bff = await startTestBff({ labs: [], port, authenticator: createOidcAuthenticator(settings!) });
});
afterAll(async () => {
  await bff?.close();
  await provider?.close();
});

/** Starts at the console's sign-in link and signs in at the provider's page. */
async function signIn(
  browser: CookieJarClient,
  username: string,
  password: string,
  returnTo = "/",
): Promise<Visit> {
  const loginPage = await browser.visit(
    `${bff.url}/api/auth/oidc/login?returnTo=${encodeURIComponent(returnTo)}`,
  );
  expect(loginPage.url.startsWith(`${provider.issuer}/interaction/`)).toBe(true);
  return browser.submitForm(loginPage, { username, password });
}

async function me(browser: CookieJarClient): Promise<Me | number> {
  const response = await browser.request(`${bff.url}/api/me`);
  return response.status === 200 ? Me.parse(await response.json()) : response.status;
}

describe("sign-in with OpenID Connect", () => {
  it("tells the sign-in page to offer the provider, and refuses passwords", async () => {
    const browser = new CookieJarClient();
    const config = await browser.request(`${bff.url}/api/auth/config`);
    expect(AuthConfig.parse(await config.json())).toEqual({ mode: "oidc", providerName: "Test University" });
    const password = await browser.postApi(`${bff.url}/api/auth/login`, {
      username: "irene",
      password: "irene-pw",
    });
    expect(password.status).toBe(400);
    expect(await me(browser)).toBe(401);
  });

  it("sends the browser to the provider with PKCE, state and nonce, kept in a short-lived cookie", async () => {
    const browser = new CookieJarClient();
    const start = await browser.request(`${bff.url}/api/auth/oidc/login`);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get("location") ?? "");
    expect(authorize.origin).toBe(provider.issuer);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: "code",
      client_id: "lab-console",
      redirect_uri: `${bff.url}/api/auth/oidc/callback`,
      scope: "openid profile groups",
      code_challenge_method: "S256",
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      state: expect.stringMatching(/^[\w-]{20,}$/),
      nonce: expect.stringMatching(/^[\w-]{20,}$/),
    });
    const pending = start.headers.getSetCookie().find((line) => line.startsWith("lab_oidc="));
    expect(pending).toMatch(/Max-Age=600/);
    expect(pending).toMatch(/Path=\/api\/auth\/oidc/);
    expect(pending).toMatch(/HttpOnly/);
    expect(pending).toMatch(/SameSite=Lax/);
    // The verifier stays with the console's cookie; only its hash travels to the provider.
    expect(decodeURIComponent(pending ?? "")).not.toContain(authorize.searchParams.get("code_challenge"));
  });

  it.each([
    ["irene", "instructor", []],
    ["theo", "ta", ["b"]],
    // "NO" is no section name: ignored.
    ["sam", "student", ["a"]],
  ] as const)(
    "signs %s in as %s of sections %j from the groups claim, back where they started",
    async (username, role, sections) => {
      const browser = new CookieJarClient();
      const account = accounts.find((each) => each.username === username)!;
      const landed = await signIn(browser, username, account.password, "/sessions?status=running");
      expect(landed.url).toBe(`${bff.url}/sessions?status=running`);
      expect(landed.trail.some((url) => url.startsWith(`${bff.url}/api/auth/oidc/callback?`))).toBe(true);
      expect(await me(browser)).toEqual({ username, role, sections });
      // The one-time secrets are gone once used.
      expect(browser.cookie("lab_oidc")).toBeUndefined();
    },
  );

  it("refuses someone in none of the mapped groups, and says why", async () => {
    const browser = new CookieJarClient();
    const landed = await signIn(browser, "olga", "olga-pw");
    expect(landed.url).toBe(`${bff.url}/sign-in?error=no-role`);
    expect(await me(browser)).toBe(401);

    const instructor = new CookieJarClient();
    await signIn(instructor, "irene", "irene-pw");
    const audit = await instructor.request(`${bff.url}/api/audit?action=sign-in-failed`);
    expect((await audit.json()).items).toEqual([
      expect.objectContaining({ actor: "olga", actorRole: null, details: { reason: "no-role" } }),
    ]);
  });

  it("comes back to the sign-in page when the person cancels at the provider", async () => {
    const browser = new CookieJarClient();
    const loginPage = await browser.visit(`${bff.url}/api/auth/oidc/login`);
    const cancelLink = /href="([^"]*\/abort)"/.exec(loginPage.body)?.[1];
    const landed = await browser.visit(new URL(cancelLink ?? "", loginPage.url).href);
    expect(landed.url).toBe(`${bff.url}/sign-in?error=cancelled`);
    expect(await me(browser)).toBe(401);
  });

  it("refuses an answer that this browser did not ask for: wrong state, another browser's, or a replay", async () => {
    const victim = new CookieJarClient();
    await victim.visit(`${bff.url}/api/auth/oidc/login`);
    const forged = await victim.visit(`${bff.url}/api/auth/oidc/callback?code=made-up&state=not-the-one`);
    expect(forged.url).toBe(`${bff.url}/sign-in?error=failed`);

    // An attacker's own code, planted in someone else's browser (login CSRF), finds no pending sign-in.
    const attacker = new CookieJarClient();
    const loginPage = await attacker.visit(`${bff.url}/api/auth/oidc/login`);
    const afterPassword = await attacker.request(
      new URL(/action="([^"]*)"/.exec(loginPage.body)?.[1] ?? "", loginPage.url).href,
      {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ username: "sam", password: "sam-pw" }),
      },
    );
    let next = new URL(afterPassword.headers.get("location") ?? "", provider.issuer).href;
    while (!next.startsWith(`${bff.url}/api/auth/oidc/callback`)) {
      const hop = await attacker.request(next);
      next = new URL(hop.headers.get("location") ?? "", next).href;
    }
    const planted = await new CookieJarClient().visit(next);
    expect(planted.url).toBe(`${bff.url}/sign-in?error=expired`);

    // The attacker's own browser could use it once; a second visit finds the secrets spent.
    const used = await attacker.visit(next);
    expect(used.url).toBe(`${bff.url}/`);
    const replay = await attacker.visit(next);
    expect(replay.url).toBe(`${bff.url}/sign-in?error=expired`);
  });

  it("ignores a pending-sign-in cookie it did not sign", async () => {
    const browser = new CookieJarClient();
    await browser.visit(`${bff.url}/api/auth/oidc/login`);
    const signed = browser.cookie("lab_oidc") ?? "";
    const forged = decodeURIComponent(signed).replace(/"returnTo":"[^"]*"/, '"returnTo":"/elsewhere"');
    browser.setCookie("lab_oidc", encodeURIComponent(forged), "/api/auth/oidc");
    const landed = await browser.visit(`${bff.url}/api/auth/oidc/callback?code=x&state=y`);
    expect(landed.url).toBe(`${bff.url}/sign-in?error=expired`);
  });

  it("never returns to another site after signing in", async () => {
    const browser = new CookieJarClient();
    const landed = await signIn(browser, "sam", "sam-pw", "/.//evil.example/");
    expect(landed.url).toBe(`${bff.url}/`);
  });

  it("signs out of the console and, through the browser, of the provider", async () => {
    const browser = new CookieJarClient();
    await signIn(browser, "theo", "theo-pw");
    // The ID token for the provider's sign-out rides in a cookie of its own, sent to sign-out alone.
    expect(browser.cookie("lab_sign_in")?.length).toBeLessThan(300);
    const sealed = browser.cookie("lab_signout")!;
    expect(sealed.length).toBeLessThan(3600);
    const signOut = await browser.postApi(`${bff.url}/api/auth/logout`);
    expect(signOut.status).toBe(200);
    const { providerSignOutUrl } = LogoutResult.parse(await signOut.json());
    expect(await me(browser)).toBe(401);
    expect(browser.cookie("lab_signout")).toBeUndefined();
    const endSession = new URL(providerSignOutUrl);
    expect(endSession.origin).toBe(provider.issuer);
    expect(endSession.searchParams.get("post_logout_redirect_uri")).toBe(`${bff.url}/sign-in`);
    const idToken = endSession.searchParams.get("id_token_hint")!;
    expect(idToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    // Encrypted in the browser's cookie store: neither the token nor its claims can be read there.
    const [, claims = ""] = idToken.split(".");
    for (const stored of [sealed, Buffer.from(decodeURIComponent(sealed), "base64url").toString("latin1")]) {
      expect(stored).not.toContain(claims.slice(0, 24));
      expect(stored).not.toContain("theo");
      expect(stored).not.toContain("id_token_hint");
    }

    const confirm = await browser.visit(providerSignOutUrl);
    const landed = await browser.submitForm(confirm, { logout: "yes" }, "op.logoutForm");
    expect(landed.url).toBe(`${bff.url}/sign-in`);
    // The provider forgot the person too: the next sign-in asks for the password again.
    const again = await browser.visit(`${bff.url}/api/auth/oidc/login`);
    expect(again.url.startsWith(`${provider.issuer}/interaction/`)).toBe(true);
  });

  it("ends only the console's session when the sign-out cookie was altered", async () => {
    const browser = new CookieJarClient();
    await signIn(browser, "theo", "theo-pw");
    const sealed = Buffer.from(decodeURIComponent(browser.cookie("lab_signout")!), "base64url");
    sealed[20]! ^= 1;
    browser.setCookie("lab_signout", sealed.toString("base64url"), "/api/auth/logout");
    const signOut = await browser.postApi(`${bff.url}/api/auth/logout`);
    expect(signOut.status).toBe(204);
    expect(await me(browser)).toBe(401);
  });

  it("sends the browser back with 'unavailable' when the provider cannot be reached", async () => {
    const { settings } = readOidcSettings({
      OIDC_ISSUER_URL: `http://127.0.0.1:${await freePort()}`,
      OIDC_CLIENT_ID: "lab-console",
      OIDC_CLIENT_SECRET: "a-client-secret",
      PUBLIC_URL: bff.url,
      OIDC_ROLE_GROUPS: JSON.stringify(roleGroups),
    });
    const unreachable = createOidcAuthenticator(settings!);
    await expect(unreachable.beginSignIn()).rejects.toThrow();
    const outcome = await unreachable.completeSignIn(
      new URL(`${bff.url}/api/auth/oidc/callback?code=x&state=y`),
      {
        state: "y",
        nonce: "n",
        codeVerifier: "v".repeat(43),
      },
    );
    expect(outcome).toMatchObject({ ok: false, reason: "unavailable", username: null });
  });
});
