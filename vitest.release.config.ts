import { defineConfig } from "vitest/config";

// What a release ships, tested once it is built: slow (it installs the production dependencies,
// compiling better-sqlite3), so `npm test` runs it on its own after the unit and integration tests.
export default defineConfig({
  test: {
    include: ["scripts/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 600_000,
  },
});
