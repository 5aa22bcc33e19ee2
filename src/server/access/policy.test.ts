import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { sendError } from "../http/errors.ts";
import { enforceAccessForTests } from "./testing/policy-for-tests.ts";

/** An app under the policy where nobody is signed in (the authorization matrix tries everyone). */
function appWith(declare: (app: ReturnType<typeof Fastify>) => void) {
  const app = Fastify();
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  enforceAccessForTests(app, {});
  declare(app);
  return app;
}

describe("the access policy", () => {
  it("refuses to start with a route that names no rule", async () => {
    const app = appWith((app) => {
      app.get("/api/open", { config: { access: "public" } }, async () => "open");
      app.get("/api/forgotten", async () => "anyone's");
    });
    await expect(app.ready()).rejects.toThrow(
      "Routes without an access rule (access/policy.ts): GET /api/forgotten, HEAD /api/forgotten",
    );
  });

  it("lets anyone call a public route and no one unsigned a signed-in one", async () => {
    const app = appWith((app) => {
      app.get("/api/open", { config: { access: "public" } }, async () => "open");
      app.get("/api/mine", { config: { access: "signed-in" } }, async () => "mine");
    });
    expect((await app.inject("/api/open")).statusCode).toBe(200);
    expect((await app.inject("/api/mine")).statusCode).toBe(401);
    expect([...app.accessPolicy.routes()]).toEqual([
      ["GET /api/open", { access: "public", websocket: false }],
      ["HEAD /api/open", { access: "public", websocket: false }],
      ["GET /api/mine", { access: "signed-in", websocket: false }],
      ["HEAD /api/mine", { access: "signed-in", websocket: false }],
    ]);
  });

  it("answers 426 to a websocket route asked without an upgrade, before anything else", async () => {
    const app = appWith((app) => {
      app.get("/api/socket", { config: { access: "staff", websocket: true } }, async () => "never");
    });
    expect((await app.inject("/api/socket")).statusCode).toBe(426);
  });
});
