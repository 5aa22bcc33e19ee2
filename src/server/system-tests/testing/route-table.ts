// Every route a built fastify app serves, read from its router, so that tests over "every route"
// cannot miss one added later. fastify prints the router as a tree (printRoutes); each line is a
// path fragment under its parent, with the methods that end there.
import type { FastifyInstance } from "fastify";

export interface Route {
  method: string;
  url: string;
}

export function routeTable(app: FastifyInstance): Route[] {
  const routes: Route[] = [];
  const fragments: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split("\n")) {
    const branch = line.search(/[├└]── /);
    if (branch < 0) continue;
    const depth = branch / 4;
    const match = /^(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line.slice(branch + 4));
    if (!match) throw new Error(`unreadable route line: ${line}`);
    fragments.length = depth;
    fragments.push(match[1] ?? "");
    // The catch-all prints as "*" without its slash.
    const url = fragments.join("").replace(/^\*$/, "/*");
    for (const method of match[2]?.split(", ") ?? []) routes.push({ method, url });
  }
  return routes.sort((a, b) => `${a.url} ${a.method}`.localeCompare(`${b.url} ${b.method}`));
}

export const routeKey = (route: Route) => `${route.method} ${route.url}`;
