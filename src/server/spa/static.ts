// Serves the built SPA from dist/web. Any other non-API GET gets index.html so that deep links
// (/sessions/abc) load the app, which then routes on the client.
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";
import { existsSync } from "node:fs";
import path from "node:path";
import { HttpError, sendError } from "../http/errors.ts";

export async function registerWeb(app: FastifyInstance, webRoot: string | undefined): Promise<void> {
  const hasWeb = webRoot !== undefined && existsSync(path.join(webRoot, "index.html"));
  if (hasWeb) {
    // fastify-static adds its own route for the built files, which anyone may load.
    app.addHook("onRoute", (route) => {
      if (route.url === "/*") route.config = { ...route.config, access: "public" };
    });
    await app.register(fastifyStatic, {
      root: webRoot,
      wildcard: true,
      setHeaders(reply, filePath) {
        // Vite puts a content hash in every asset name, so those never change; index.html does.
        const hashed = filePath.includes(`${path.sep}assets${path.sep}`);
        reply.header("cache-control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
      },
    });
  }
  app.setNotFoundHandler((request, reply) => {
    const isPage = request.method === "GET" || request.method === "HEAD";
    if (hasWeb && isPage && !request.url.startsWith("/api/") && request.url !== "/api") {
      return reply.sendFile("index.html");
    }
    return sendError(
      new HttpError(404, "not_found", `No such endpoint: ${request.method} ${request.url.split("?")[0]}`),
      request,
      reply,
    );
  });
}
