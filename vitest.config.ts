import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // In Node. The SPA's component tests (.test.tsx) run in Chromium: vitest.components.config.ts.
    include: ["src/**/*.test.ts"],
    // Real guests boot for minutes, and a real API server is built with Go: npm run test:real-guests
    // and test:real-cluster run them (vitest.real-guests.config.ts, vitest.real-cluster.config.ts).
    exclude: [...configDefaults.exclude, "src/**/*.real-guest.test.ts", "src/**/*.real-cluster.test.ts"],
    // A test's waits stretch with the machine's load (common/testing/patience.ts, up to six times):
    // its own budget must cover them, or a busy machine fails it for being busy.
    testTimeout: 60_000,
    // expect.poll's own default gives up after one second, which a busy machine can take for anything.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 60_000,
    // Integration tests start real servers and sandboxes; two cores do not gain from more workers.
    maxWorkers: 2,
  },
});
