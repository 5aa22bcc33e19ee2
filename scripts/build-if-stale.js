// `npm start`'s first step: builds dist/ (npm run build) if any part of it is out of date, and
// otherwise is done before TypeScript or a build tool would have loaded.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { isCurrent, partInputs, root } from "./build-stamps.js";

const outDir = path.join(root, "dist");
const parts = /** @type {(keyof typeof partInputs)[]} */ (Object.keys(partInputs));
const stale = parts.filter((part) => !isCurrent(outDir, part));
const builders = { web: "the web app (Vite)", node: "the Node programs (esbuild)" };
if (stale.length > 0) {
  // The first start spends its time here, and a build says nothing until a part is done: unannounced,
  // a newcomer takes the wait for a hang. On stderr, as the doctor's --json goes through this step too.
  console.error(
    `dist/ is missing or older than the sources: building ${stale.map((part) => builders[part]).join(" and ")}.\n` +
      "A first build takes up to about 40 s on a two-core machine; later starts skip it until the sources change.",
  );
  const build = spawnSync(process.execPath, ["--import", "tsx", "scripts/build.ts", "--if-stale"], {
    cwd: root,
    stdio: "inherit",
  });
  process.exitCode = build.status ?? 1;
}
