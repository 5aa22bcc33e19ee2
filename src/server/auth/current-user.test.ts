// The sign-in cookies on a real fastify with @fastify/cookie: the sign-in itself in `lab_sign_in`,
// and the provider's sign-out URL (with its ID token), encrypted, in a cookie only the sign-out path
// is sent.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fastifyCookie from "@fastify/cookie";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clearSignInCookie, findSignIn, setSignInCookie } from "./current-user.ts";
import { SqliteEndedSignInRepository } from "./ended-sign-ins/sqlite-repository.ts";
import { SignIns } from "./sign-ins.ts";
import { SignOutCookie } from "./sign-out-cookie.ts";

let dir: string;
let store: SqliteEndedSignInRepository;
let signIns: SignIns;
let app: FastifyInstance;
const secret = "a-test-secret-that-is-long-enough-to-sign";

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "current-user-"));
  store = SqliteEndedSignInRepository.open(dir);
  signIns = await SignIns.open({ store });
  app = Fastify();
  await app.register(fastifyCookie, { secret });
  const signOutCookie = new SignOutCookie(secret);
  app.post<{ Body: { providerSignOutUrl?: string } }>("/sign-in", async (request, reply) => {
    const session = signIns.create({ username: "sam", role: "student", sections: [] }, request.body);
    setSignInCookie(request, reply, session);
    signOutCookie.set(request, reply, session);
    return { id: session.id };
  });
  app.get("/api/me", async (request) => findSignIn(request, signIns) ?? null);
  app.post("/api/auth/logout", async (request, reply) => {
    const session = findSignIn(request, signIns);
    clearSignInCookie(request, reply);
    return { providerSignOutUrl: (session && signOutCookie.read(request, session)) ?? null };
  });
});
afterAll(async () => {
  await app?.close();
  await signIns?.close();
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

const endSession = "https://login.example.edu/realms/uni/protocol/openid-connect/logout";

/** A provider sign-out URL as openid-client builds it, with an ID token of `tokenLength` characters. */
function providerSignOutUrl(tokenLength: number): string {
  const url = new URL(endSession);
  url.searchParams.set("post_logout_redirect_uri", "https://labs.example.edu/sign-in");
  url.searchParams.set("id_token_hint", `eyJhbGciOiJSUzI1NiJ9.${"a".repeat(tokenLength)}.c2ln`);
  url.searchParams.set("client_id", "lab-console");
  return url.href;
}

async function signIn(providerSignOutUrl?: string) {
  const response = await app.inject({ method: "POST", url: "/sign-in", payload: { providerSignOutUrl } });
  const cookies = new Map(
    response.headers["set-cookie"] === undefined
      ? []
      : [response.headers["set-cookie"]].flat().map((line) => {
          const [pair = "", ...attributes] = line.split("; ");
          const name = pair.slice(0, pair.indexOf("="));
          return [name, { pair, attributes }] as const;
        }),
  );
  return { id: (response.json() as { id: string }).id, cookies };
}

describe("the sign-in cookies", () => {
  it("still accept a sign-in under the cookie's former name, and clear it at sign-out", async () => {
    const { id, cookies } = await signIn();
    const value = cookies.get("lab_sign_in")!.pair.slice("lab_sign_in=".length);
    const former = { cookie: `lab_session=${value}` };
    const me = await app.inject({ url: "/api/me", headers: former });
    expect(me.json()).toMatchObject({ id, user: { username: "sam" } });

    const logout = await app.inject({ method: "POST", url: "/api/auth/logout", headers: former });
    const cleared = [logout.headers["set-cookie"]].flat().map((line) => String(line).split("=")[0]);
    expect(cleared).toEqual(["lab_sign_in", "lab_session"]);
  });

  it("keep the provider's sign-out URL out of the sign-in cookie, for the sign-out path alone", async () => {
    const url = providerSignOutUrl(1500);
    const { id, cookies } = await signIn(url);
    const session = cookies.get("lab_sign_in")!;
    const signOut = cookies.get("lab_signout")!;
    expect(session.pair.length).toBeLessThan(300);
    expect(session.attributes).toContain("Path=/");
    expect(signOut.attributes).toContain("Path=/api/auth/logout");
    expect(signOut.attributes).toEqual(expect.arrayContaining(["HttpOnly", "SameSite=Strict"]));
    // Encrypted: neither the ID token nor anything else of the URL shows in the browser's cookie store.
    const value = decodeURIComponent(signOut.pair.slice("lab_signout=".length));
    for (const plain of [value, Buffer.from(value, "base64url").toString("latin1")]) {
      expect(plain).not.toContain("eyJhbGciOiJSUzI1NiJ9");
      expect(plain).not.toContain("aaaaaaaa");
      expect(plain).not.toContain("login.example.edu");
    }

    const me = await app.inject({ url: "/api/me", headers: { cookie: session.pair } });
    expect(me.json()).toEqual({
      id,
      user: { username: "sam", role: "student", sections: [] },
      issuedAt: expect.any(Number),
      expiresAt: expect.any(Number),
    });
    const logout = await app.inject({
      method: "POST",
      url: "/api/auth/logout",
      headers: { cookie: `${session.pair}; ${signOut.pair}` },
    });
    expect(logout.json()).toEqual({ providerSignOutUrl: url });
    expect([logout.headers["set-cookie"]].flat()).toEqual([
      expect.stringMatching(/^lab_sign_in=;.*Path=\//),
      expect.stringMatching(/^lab_signout=;.*Path=\/api\/auth\/logout/),
    ]);
  });

  it("send the provider no id_token_hint rather than a cookie too big for a browser to keep", async () => {
    const { cookies } = await signIn(providerSignOutUrl(6000));
    const signOut = cookies.get("lab_signout")!;
    expect(signOut.pair.length).toBeLessThan(4000);
    const logout = await app.inject({
      method: "POST",
      url: "/api/auth/logout",
      headers: { cookie: `${cookies.get("lab_sign_in")!.pair}; ${signOut.pair}` },
    });
    const url = new URL((logout.json() as { providerSignOutUrl: string }).providerSignOutUrl);
    expect(`${url.origin}${url.pathname}`).toBe(endSession);
    expect(url.searchParams.get("id_token_hint")).toBeNull();
    expect(url.searchParams.get("client_id")).toBe("lab-console");
    expect(url.searchParams.get("post_logout_redirect_uri")).toBe("https://labs.example.edu/sign-in");
  });

  it("ignore a sign-out cookie left from another sign-in", async () => {
    const earlier = await signIn(providerSignOutUrl(100));
    const later = await signIn();
    expect(later.cookies.has("lab_signout")).toBe(false);
    const logout = await app.inject({
      method: "POST",
      url: "/api/auth/logout",
      headers: {
        cookie: `${later.cookies.get("lab_sign_in")!.pair}; ${earlier.cookies.get("lab_signout")!.pair}`,
      },
    });
    expect(logout.json()).toEqual({ providerSignOutUrl: null });
  });

  it("ignore a sign-out cookie that was altered", async () => {
    const { cookies } = await signIn(providerSignOutUrl(100));
    const session = cookies.get("lab_sign_in")!.pair;
    const value = cookies.get("lab_signout")!.pair.slice("lab_signout=".length);
    const sealed = Buffer.from(value, "base64url");
    sealed[sealed.length - 1]! ^= 1;
    const logoutWith = async (signOut: string) =>
      (
        await app.inject({
          method: "POST",
          url: "/api/auth/logout",
          headers: { cookie: `${session}; lab_signout=${signOut}` },
        })
      ).json();
    expect(await logoutWith(sealed.toString("base64url"))).toEqual({ providerSignOutUrl: null });
    expect(await logoutWith("not-even-base64")).toEqual({ providerSignOutUrl: null });
    expect(await logoutWith(value)).toEqual({ providerSignOutUrl: providerSignOutUrl(100) });
  });
});
