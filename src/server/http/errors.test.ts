import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { DomainError, type DomainErrorKind, tooSoon } from "../errors/domain-error.ts";
import { ConsoleUnavailableError } from "../replicas/console-ownership.ts";
import { sendError } from "./errors.ts";

async function answerTo(error: Error) {
  const app = Fastify();
  app.setErrorHandler((thrown, request, reply) => sendError(thrown, request, reply));
  app.get("/", async () => {
    throw error;
  });
  const response = await app.inject({ method: "GET", url: "/" });
  await app.close();
  return { status: response.statusCode, headers: response.headers, body: response.json() };
}

describe("the error map", () => {
  const kinds: [DomainErrorKind, number, string][] = [
    ["invalid", 400, "invalid"],
    ["not_found", 404, "not_found"],
    ["forbidden", 403, "forbidden"],
    ["conflict", 409, "conflict"],
    ["used_up", 409, "quota"],
    ["over_quota", 429, "quota"],
    ["too_soon", 429, "rate_limited"],
    ["no_capacity", 503, "capacity"],
    ["rejected", 422, "invalid"],
    ["unavailable", 503, "unavailable"],
  ];

  it.each(kinds)(
    "answers a domain error of kind %s with %i %s, its reason and its words",
    async (kind, status, code) => {
      const answer = await answerTo(
        new DomainError(kind, "lab_not_found", "There is no lab called x.", { lab: "x" }),
      );
      expect(answer.status).toBe(status);
      expect(answer.body).toEqual({
        error: { code, reason: "lab_not_found", params: { lab: "x" }, message: "There is no lab called x." },
      });
    },
  );

  it("says when to come back after a too-soon refusal, and leaves out empty parameters", async () => {
    const answer = await answerTo(tooSoon("restart_too_often", 7, "Try again in 7 s."));
    expect(answer.headers["retry-after"]).toBe("7");
    expect(answer.body.error).toEqual({
      code: "rate_limited",
      reason: "restart_too_often",
      params: { seconds: 7 },
      message: "Try again in 7 s.",
    });
    const plain = await answerTo(new DomainError("conflict", "run_still_going", "Still going."));
    expect(plain.body.error).toEqual({
      code: "conflict",
      reason: "run_still_going",
      message: "Still going.",
    });
    expect(plain.headers["retry-after"]).toBeUndefined();
  });

  it("answers a console whose holder the cluster cannot tell with 503, keeping the cause to itself", async () => {
    const answer = await answerTo(
      new ConsoleUnavailableError(new Error("connect ECONNREFUSED 10.0.0.1:6443")),
    );
    expect(answer.status).toBe(503);
    expect(answer.body.error).toEqual({
      code: "unavailable",
      reason: "console_cluster_unreachable",
      message:
        "The console cannot be opened right now: Lab Console cannot reach the cluster. Try again in a moment.",
    });
  });

  it("keeps what it does not know out of the answer", async () => {
    const answer = await answerTo(new Error("secret database password in a stack"));
    expect(answer.status).toBe(500);
    expect(answer.body.error).toEqual({ code: "internal", message: "Something went wrong on the server." });
  });
});
