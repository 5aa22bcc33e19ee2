import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig, devices } from "@playwright/test";
import { oidcConsoleEnv, oidcConsolePort, oidcConsoleURL, oidcIssuer } from "./e2e/support/oidc-setup.ts";

// Playwright cannot download its own browsers here: use Debian's Chromium when it exists.
// (As root it needs no sandbox flag: Playwright passes --no-sandbox unless chromiumSandbox is set.)
const debianChromium = "/usr/bin/chromium";
const executablePath = existsSync(debianChromium) ? debianChromium : undefined;

const port = Number(process.env.E2E_PORT ?? 18080);
const baseURL = `http://127.0.0.1:${port}`;

// A fresh data directory per run, so no login or session survives from an earlier run. Workers load
// this file again but inherit the variable, so only the runner creates a directory.
export const e2eDataDir = (process.env.LAB_E2E_DATA_DIR ??= mkdtempSync(join(tmpdir(), "lab-console-e2e-")));
// The OpenID Connect console's own (e2e/oidc.spec.ts).
const e2eOidcDataDir = (process.env.LAB_E2E_OIDC_DATA_DIR ??= mkdtempSync(
  join(tmpdir(), "lab-console-e2e-oidc-"),
));

export default defineConfig({
  testDir: "e2e",
  timeout: 90_000,
  expect: { timeout: 30_000 },
  workers: 1,
  forbidOnly: Boolean(process.env.CI),
  reporter: process.env.CI ? "list" : [["list"], ["html", { open: "never" }]],
  use: {
    ...devices["Desktop Chrome"],
    baseURL,
    viewport: { width: 1280, height: 800 },
    trace: "retain-on-failure",
    launchOptions: {
      executablePath,
      args: [
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    },
  },
  webServer: [
    {
      // The BFF serves the built SPA from dist/web (`npm test` builds it first) and starts its own
      // emulator; fast timing makes a VM reach Running in well under a second.
      command: "npm start",
      url: `${baseURL}/api/readyz`,
      env: {
        PORT: String(port),
        HOST: "127.0.0.1",
        DATA_DIR: e2eDataDir,
        LAB_EMULATOR_TIMING: "fast",
      },
      // Never reuse: a server already on the port may be another checkout's (set E2E_PORT to run beside it).
      reuseExistingServer: false,
      timeout: 120_000,
      // SIGTERM rather than Playwright's default SIGKILL: the BFF then stops the emulator it spawned (in
      // its own process group), which a SIGKILL would leave running after every run.
      gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
      stdout: "pipe",
      stderr: "pipe",
    },
    {
      // The test OpenID provider (oidc-provider) that the OIDC console signs people in at.
      command: "node --import tsx e2e/support/oidc-provider.ts",
      url: `${oidcIssuer}/.well-known/openid-configuration`,
      reuseExistingServer: false,
      timeout: 30_000,
      gracefulShutdown: { signal: "SIGTERM", timeout: 5_000 },
    },
    {
      // A second console in AUTH_MODE=oidc with its own emulator, for e2e/oidc.spec.ts only.
      command: "npm start",
      url: `${oidcConsoleURL}/api/readyz`,
      env: {
        ...oidcConsoleEnv,
        PORT: String(oidcConsolePort),
        HOST: "127.0.0.1",
        DATA_DIR: e2eOidcDataDir,
        LAB_EMULATOR_TIMING: "fast",
      },
      reuseExistingServer: false,
      timeout: 120_000,
      gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
      stdout: "pipe",
      stderr: "pipe",
    },
  ],
});
