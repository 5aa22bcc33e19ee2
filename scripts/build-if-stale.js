// `npm start`'s first step: builds dist/ (npm run build) if any part of it is out of date, and
// otherwise is done before TypeScript or a build tool would have loaded.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { isCurrent, partInputs, root } from "./build-stamps.js";

const outDir = path.join(root, "dist");
const parts = /** @type {(keyof typeof partInputs)[]} */ (Object.keys(partInputs));
if (!parts.every((part) => isCurrent(outDir, part))) {
  const build = spawnSync(process.execPath, ["--import", "tsx", "scripts/build.ts", "--if-stale"], {
    cwd: root,
    stdio: "inherit",
  });
  process.exitCode = build.status ?? 1;
}
