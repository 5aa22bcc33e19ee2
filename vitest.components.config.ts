import { existsSync } from "node:fs";
import react from "@vitejs/plugin-react";
import { playwright } from "@vitest/browser-playwright";
import { defineConfig } from "vitest/config";

// Playwright cannot download its own browsers here: use Debian's Chromium when it exists (as
// playwright.config.ts does).
const debianChromium = "/usr/bin/chromium";
const executablePath = existsSync(debianChromium) ? debianChromium : undefined;

// The SPA's components, rendered in a real Chromium: a component test is a .test.tsx beside its
// component (npm run test:components). The unit tests (vitest.config.ts) run in Node.
export default defineConfig({
  plugins: [react()],
  // Bundled before the first test: found one by one as tests import them, each discovery reloads the
  // page mid-run, and a React bundled apart from the one vitest-browser-react imports breaks hooks.
  optimizeDeps: {
    include: [
      "react",
      "react/jsx-dev-runtime",
      "react-dom",
      "react-dom/client",
      "vitest-browser-react",
      "react-i18next",
      "i18next",
      "react-router",
      "@xterm/xterm",
      "@xterm/addon-fit",
    ],
  },
  test: {
    include: ["src/web/**/*.test.tsx"],
    // A busy machine's page can take longer than the default second to show what a test waits for.
    expect: { poll: { timeout: 10_000 } },
    browser: {
      enabled: true,
      headless: true,
      // A failing test says what it expected; a screenshot would only litter the source folders.
      screenshotFailures: false,
      provider: playwright({ launchOptions: { executablePath } }),
      instances: [{ browser: "chromium" }],
    },
  },
});
