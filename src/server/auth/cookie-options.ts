// The attributes every sign-in cookie gets.
import type { FastifyRequest } from "fastify";

export function cookieOptions(request: FastifyRequest, path: string) {
  return {
    httpOnly: true,
    sameSite: "strict" as const,
    // request.protocol only believes X-Forwarded-Proto when TRUST_PROXY is set: behind a proxy that
    // ends TLS, without it the cookies go without Secure.
    secure: request.protocol === "https",
    path,
  };
}
