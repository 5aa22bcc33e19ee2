import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import { readdirSync } from "node:fs";
import { sep } from "node:path";

// Imports flow one way: web, server, emulator and agent may import common, never each other.
// Tests are the exception: an integration test starts the emulator in-process beside the code it tests.
const parts = ["web", "server", "emulator", "agent"];
const testFiles = ["**/*.test.{ts,tsx}", "**/testing/**"];
const partPatterns = (part) =>
  parts
    .filter((other) => other !== part)
    .map((other) => ({ group: [`**/${other}/*`], message: `src/${part} must not import src/${other}` }));
const restrictImports = (patterns) => ({ "no-restricted-imports": ["error", { patterns }] });
const boundaries = parts
  .filter((part) => part !== "server")
  .map((part) => ({
    files: [`src/${part}/**/*.{ts,tsx}`],
    ignores: testFiles,
    rules: restrictImports(partPatterns(part)),
  }));
// The BFF has a folder of its own named agent/ (its client of the lab agent), so in src/server the
// name cannot tell src/agent apart: the steps up can, one "../" more than the file's folders below
// src/server. One entry per depth, as deep as the tree goes.
const serverDepth = Math.max(
  ...readdirSync(new URL("src/server", import.meta.url), { recursive: true }).map(
    (file) => file.split(sep).length - 1,
  ),
);
const serverBoundaries = Array.from({ length: serverDepth + 1 }, (_, depth) => ({
  files: [`src/server/${"*/".repeat(depth)}*.{ts,tsx}`],
  ignores: testFiles,
  rules: restrictImports([
    ...partPatterns("server").filter((pattern) => !pattern.group.includes("**/agent/*")),
    { regex: `^(\\.\\./){${depth + 1}}agent/`, message: "src/server must not import src/agent" },
  ]),
}));

// Inside the SPA the pages in app/ compose the features: a feature imports no other feature and nothing
// of app/, and lib/ and components/, which every feature shares, import neither. What one feature needs
// of another, the page passes in. Imports are matched as written, so a folder's name is the test.
const features = readdirSync(new URL("src/web/features", import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const appPattern = (from) => ({ group: ["**/app/**"], message: `${from} must not import src/web/app` });
const webLayers = [
  ...features.map((feature) => ({
    files: [`src/web/features/${feature}/**/*.{ts,tsx}`],
    patterns: [
      ...features
        .filter((other) => other !== feature)
        .map((other) => ({
          group: [`**/${other}/**`],
          message: `features/${feature} must not import features/${other}: the page in app/routes passes what it needs`,
        })),
      appPattern(`features/${feature}`),
    ],
  })),
  {
    files: ["src/web/lib/**/*.{ts,tsx}", "src/web/components/**/*.{ts,tsx}"],
    patterns: [
      {
        group: ["**/features/**"],
        message: "lib/ and components/ are shared by every feature: they import none",
      },
      appPattern("lib/ and components/"),
    ],
  },
];
// Two entries a layer, since a later entry's options replace an earlier one's: tests keep only the
// layer's rule, other files get it together with the web part's.
const webBoundaries = webLayers.flatMap(({ files, patterns }) => [
  { files, rules: restrictImports(patterns) },
  { files, ignores: testFiles, rules: restrictImports([...partPatterns("web"), ...patterns]) },
]);

export default tseslint.config(
  { ignores: ["dist", "node_modules", ".lab", ".node-lts", "playwright-report", "test-results"] },
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
  ...serverBoundaries,
  ...webBoundaries,
);
