import { existsSync } from "node:fs";
import { defineConfig, devices } from "@playwright/test";

// Playwright cannot download its own browsers here: use Debian's Chromium when it exists.
const debianChromium = "/usr/bin/chromium";
const executablePath = existsSync(debianChromium) ? debianChromium : undefined;

export default defineConfig({
  testDir: "e2e",
  timeout: 90_000,
  expect: { timeout: 30_000 },
  workers: 1,
  reporter: process.env.CI ? "list" : [["list"], ["html", { open: "never" }]],
  use: {
    ...devices["Desktop Chrome"],
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
});
