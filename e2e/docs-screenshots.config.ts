import { fileURLToPath } from "node:url";
import { defineConfig } from "@playwright/test";
import baseConfig, { e2eDataDir } from "../playwright.config.ts";

// Retakes the pictures in docs/: the README's (docs/screenshot.png) and the tour (docs/tour/), with
// `npm run docs:screenshots`. Separate from the suite so CI never rewrites a tracked file; realistic
// timing so the timeline shows real step times.
const repoRoot = fileURLToPath(new URL("..", import.meta.url));
// TOUR_PORT: to take the pictures beside an e2e run, which holds 18080-18082.
const port = Number(process.env.TOUR_PORT ?? 18082);

export default defineConfig({
  ...baseConfig,
  testDir: ".",
  testMatch: ["readme-screenshot.ts", "tour.ts"],
  reporter: "list",
  use: { ...baseConfig.use, baseURL: `http://127.0.0.1:${port}` },
  webServer: {
    command: "npm start",
    cwd: repoRoot,
    url: `http://127.0.0.1:${port}/api/readyz`,
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: e2eDataDir,
      LAB_EMULATOR_TIMING: "realistic",
    },
    reuseExistingServer: false,
    timeout: 120_000,
    // SIGTERM rather than Playwright's default SIGKILL: the BFF then stops the emulator it spawned (in
    // its own process group), which a SIGKILL would leave running after every run.
    gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
  },
});
