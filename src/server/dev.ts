// `npm run dev`: the BFF as `npm start` runs it, plus Vite's dev server with hot reload on its own
// port, proxying /api (websockets included) to the BFF. Open the Vite URL.
import path from "node:path";
import { createServer } from "vite";
import { readConfigOrExit, runUntilSignalled } from "./main.ts";
import { projectRoot } from "./project-root.ts";
import { startServer } from "./start.ts";

const config = readConfigOrExit();
const vitePort = Number(process.env.VITE_PORT ?? 5173);

await runUntilSignalled(async () => {
  const bff = await startServer(config, { serveWeb: false });
  // Vite keeps the browser's Host header when proxying, so the BFF's same-origin check sees the Vite origin.
  const vite = await createServer({
    configFile: path.join(projectRoot, "vite.config.ts"),
    root: projectRoot,
    server: {
      host: config.host,
      port: vitePort,
      proxy: { "/api": { target: bff.url, ws: true } },
    },
  });
  await vite.listen();
  const devUrl = vite.resolvedUrls?.local[0] ?? `http://${config.host}:${vitePort}/`;
  console.log(`Dev server with hot reload: ${devUrl}  (API proxied to ${bff.url})\n`);
  return { ...bff, close: async () => (await vite.close(), await bff.close()) };
});
