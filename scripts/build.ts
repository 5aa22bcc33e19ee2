// `npm run build`: the programs a release ships, as plain JavaScript under dist/.
// - dist/web: the SPA (Vite);
// - dist/server/main.js (the BFF), dist/server/cli/doctor.js, dist/server/cli/sign-out-user.js
//   and dist/emulator/main.js: one bundle per program (what it loads later with import() in files
//   beside it), at the place of its entry in src/, with the files its code reads beside itself (the
//   emulator's Python and schema, the RBAC defaults) copied to their places in the same tree;
// - dist/agent/lab_agent/: the lab agent's modules, Python as it is (the BFF zips them).
// - dist/sbom.cdx.json and dist/THIRD-PARTY-LICENSES.txt: what the release carries from others.
// With --if-stale (what `npm start` runs when build-if-stale.js finds a part out of date) a part is
// built only when its inputs changed since its last build (build-stamps.js).
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import type * as esbuild from "esbuild";
import { filesUnder, fingerprintOf, partInputs, root, stampFileOf, stampOf } from "./build-stamps.js";
import { lockKeyOf, writeReleaseNotices } from "./release-notices.ts";

interface Part {
  name: keyof typeof partInputs;
  /** Builds the part; resolves with the files its bundles hold, for the release notices. */
  build(outDir: string): Promise<string[]>;
}

const parts: Part[] = [
  {
    name: "web",
    async build(outDir) {
      // The build tools are imported only when a part is built: `npm start` with dist/ current needs neither.
      const { build: viteBuild } = await import("vite");
      const output = await viteBuild({
        configFile: path.join(root, "vite.config.ts"),
        root,
        logLevel: "warn",
        build: { outDir: path.join(outDir, "web"), emptyOutDir: true },
      });
      return (Array.isArray(output) ? output : [output])
        .flatMap((result) => ("output" in result ? result.output : []))
        .flatMap((chunk) => (chunk.type === "chunk" ? chunk.moduleIds : []));
    },
  },
  {
    name: "node",
    async build(outDir) {
      await Promise.all(
        ["server", "emulator", "agent"].map((name) =>
          rm(path.join(outDir, name), { recursive: true, force: true }),
        ),
      );
      const { build: esbuildBuild } = await import("esbuild");
      // One build per program: a module's place relative to its bundle differs from bundle to bundle.
      const results = await Promise.all(
        programs.map((program) => {
          const bundle = path.join(outDir, path.relative("src", program)).replace(/\.ts$/, ".js");
          return esbuildBuild({
            absWorkingDir: root,
            entryPoints: [program],
            outdir: path.dirname(bundle),
            entryNames: "[name]",
            platform: "node",
            format: "esm",
            target: "node20",
            // One file per program, its dependencies inside: client-node alone costs 80 MB of memory
            // as 600 modules and under 30 MB as part of one file. What cannot be bundled (native
            // code) is package.json's dependencies: all that `npm ci --omit=dev` installs.
            bundle: true,
            // What a program imports with import() is a file of its own beside it, loaded then:
            // the BFF starts its emulator before it loads the rest of its code.
            splitting: true,
            external: [...runtimeDependencies, ...optionalNativeModules],
            minifyWhitespace: true,
            minifySyntax: true,
            keepNames: true,
            sourcemap: "linked",
            sourcesContent: false,
            banner: { js: bundleBanner },
            plugins: [placedAsInTheSourceTree(outDir, bundle)],
            metafile: true,
            logLevel: "warning",
          });
        }),
      );
      const assets = runtimeAssets(["src/server", "src/emulator", "src/agent/lab_agent"]);
      await Promise.all(
        assets.map((file) => cp(path.join(root, file), path.join(outDir, path.relative("src", file)))),
      );
      return results.flatMap((result) => Object.keys(result.metafile.inputs));
    },
  },
];

const runtimeDependencies = Object.keys(
  (JSON.parse(await readFile(path.join(root, "package.json"), "utf8")) as { dependencies: object })
    .dependencies,
);

/** Optional speed-ups their users load only if installed (pg's native client, ws' helpers). */
const optionalNativeModules = ["pg-native", "bufferutil", "utf-8-validate"];

const programs = [
  "src/server/main.ts",
  "src/server/cli/doctor.ts",
  "src/server/cli/sign-out-user.ts",
  "src/emulator/main.ts",
];

// CommonJS dependencies inside an ES module bundle still call require; import.meta of each module
// is rebuilt from where that module would sit in dist/ (below).
const bundleBanner = [
  `import { createRequire as __createRequire } from "node:module";`,
  `import { dirname as __dirnameOf } from "node:path";`,
  `import { fileURLToPath as __fileURLToPath } from "node:url";`,
  `const require = __createRequire(import.meta.url);`,
  `const __moduleUrl = (relative) => new URL(relative, import.meta.url).href;`,
].join("\n");

/**
 * Each module's import.meta as if it were its own file at its place in dist/, which mirrors src/:
 * what a module finds beside itself (the emulator's Python, the agent, the program it spawns) is
 * then found from the bundle too, where the build copies it.
 */
function placedAsInTheSourceTree(outDir: string, bundle: string): esbuild.Plugin {
  return {
    name: "placed-as-in-the-source-tree",
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        const source = await readFile(args.path, "utf8");
        if (!source.includes("import.meta.")) return undefined;
        const placed = path
          .join(outDir, path.relative(path.join(root, "src"), args.path))
          .replace(/\.ts$/, ".js");
        const url = `__moduleUrl(${JSON.stringify(`./${path.relative(path.dirname(bundle), placed)}`)})`;
        const contents = source
          .replaceAll("import.meta.url", url)
          .replaceAll("import.meta.filename", `__fileURLToPath(${url})`)
          .replaceAll("import.meta.dirname", `__dirnameOf(__fileURLToPath(${url}))`);
        return { contents, loader: "ts" };
      });
    },
  };
}

/** The files beside the code that it reads at run time: not TypeScript, not test helpers. */
function runtimeAssets(folders: string[]): string[] {
  return folders
    .flatMap((folder) => filesUnder(folder))
    .filter((file) => !file.endsWith(".ts") && !/(^|\/)testing\//.test(file));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { "if-stale": { type: "boolean", default: false }, out: { type: "string", default: "dist" } },
  });
  const outDir = path.resolve(root, values.out);
  const stampDir = path.join(outDir, ".build");
  await mkdir(stampDir, { recursive: true });
  let built = false;
  for (const part of parts) {
    const stampFile = stampFileOf(outDir, part.name);
    const packagesFile = path.join(stampDir, `${part.name}-packages.json`);
    const current = fingerprintOf(part.name);
    if (values["if-stale"] && stampOf(outDir, part.name) === current) continue;
    const started = Date.now();
    await rm(stampFile, { force: true });
    const files = await part.build(outDir);
    const packages = [...new Set(files.flatMap((file) => lockKeyOf(root, file) ?? []))].sort();
    await writeFile(packagesFile, `${JSON.stringify(packages, null, 2)}\n`);
    await writeFile(stampFile, current);
    built = true;
    console.log(
      `Built ${part.name} into ${path.relative(process.cwd(), outDir) || "."} in ${Date.now() - started} ms`,
    );
  }
  if (built) {
    const bundled = await Promise.all(
      parts.map(
        async (part) =>
          JSON.parse(await readFile(path.join(stampDir, `${part.name}-packages.json`), "utf8")) as string[],
      ),
    );
    await writeReleaseNotices({ root, outDir, bundled: bundled.flat() });
  }
}

await main();
