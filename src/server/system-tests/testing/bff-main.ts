// The BFF as `npm start` runs it (configuration from the environment, SIGTERM for a clean stop),
// without building the SPA: for tests that run it as a process of its own, to kill it for real.
// Prints "proof-bff-ready <url>" once it listens.
import { readConfigOrExit, runUntilSignalled } from "../../main.ts";
import { startServer } from "../../start.ts";

const config = readConfigOrExit();
await runUntilSignalled(async () => {
  const server = await startServer(config, { serveWeb: false });
  console.log(`proof-bff-ready ${server.url}`);
  return server;
});
