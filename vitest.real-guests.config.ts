// `npm run test:real-guests`: the tests that boot a real Linux under QEMU (src/**/*.real-guest.test.ts).
// A boot takes a minute or two under TCG: they run last in `npm test`, one file at a time, each file
// sharing its VMs between its tests.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.real-guest.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 900_000,
    expect: { poll: { timeout: 600_000 } },
    maxWorkers: 1,
    fileParallelism: false,
    // A real boot log has systemd's status lines cut through their colour sequences (docs/emulator.md,
    // "Real guests"): the test consoles' xterm.js logs each one with its whole parser state, dozens
    // of screens per boot, while the text itself shows.
    onConsoleLog: (log) => !log.startsWith("xterm.js: Parsing error"),
  },
});
