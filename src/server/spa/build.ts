// `npm start` on a fresh checkout must show the SPA: build it once when dist/web is missing.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

export async function ensureWebBuilt(projectRoot: string, webRoot: string): Promise<void> {
  if (existsSync(path.join(webRoot, "index.html"))) return;
  console.log(
    `Building the web app into ${path.relative(projectRoot, webRoot)} (once; takes a few seconds)...`,
  );
  const viteBin = path.join(
    path.dirname(createRequire(import.meta.url).resolve("vite/package.json")),
    "bin/vite.js",
  );
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [viteBin, "build", "--logLevel", "warn"], {
      cwd: projectRoot,
      stdio: "inherit",
    });
    child.once("error", reject);
    child.once("exit", resolve);
  });
  if (code !== 0) throw new Error(`Building the web app failed (vite build exited with ${code}).`);
}
