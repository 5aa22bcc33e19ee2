import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";

// Imports flow one way: web, server, emulator and agent may import common, never each other.
// Tests are the exception: an integration test starts the emulator in-process beside the code it tests.
const parts = ["web", "server", "emulator", "agent"];
const boundaries = parts.map((part) => ({
  files: [`src/${part}/**/*.{ts,tsx}`],
  ignores: ["**/*.test.{ts,tsx}", "**/testing/**"],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: parts
          .filter((other) => other !== part)
          .map((other) => ({
            group: [`**/${other}/*`],
            message: `src/${part} must not import src/${other}`,
          })),
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ["dist", "node_modules", ".lab", "playwright-report", "test-results"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["src/web/**/*.tsx", "src/web/**/*.ts"],
    plugins: { "react-hooks": reactHooks },
    rules: { "react-hooks/rules-of-hooks": "error", "react-hooks/exhaustive-deps": "error" },
  },
  ...boundaries,
);
