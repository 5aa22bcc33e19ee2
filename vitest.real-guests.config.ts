// `npm run test:real-guests`: the tests that boot a real Linux under QEMU (src/**/*.real-guest.test.ts).
// Minutes per boot under TCG, so they run one file at a time, apart from `npm test`.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.real-guest.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 900_000,
    expect: { poll: { timeout: 600_000 } },
    maxWorkers: 1,
    fileParallelism: false,
  },
});
