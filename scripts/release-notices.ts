// What a release carries from others, for the image: a CycloneDX software bill of materials
// (dist/sbom.cdx.json) and the licence texts (dist/THIRD-PARTY-LICENSES.txt). A release carries two
// kinds of packages: those its bundles hold (the SPA's and the Node programs', known from the modules
// the build put in them) and those installed beside dist/ (`npm ci --omit=dev`, known from the
// lockfile). `npm sbom --omit=dev` sees only the second kind.
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

interface LockedPackage {
  version?: string;
  license?: string;
  dev?: boolean;
}

interface Lockfile {
  name: string;
  version: string;
  packages: Record<string, LockedPackage>;
}

/** The lockfile key ("node_modules/@scope/name", nested ones included) of the package a file belongs to. */
export function lockKeyOf(root: string, file: string): string | undefined {
  // From the first node_modules on: a checkout whose node_modules is a link resolves outside itself.
  const relative = path.relative(root, path.resolve(root, file)).split(path.sep).join("/");
  const at = relative.search(/(^|\/)node_modules\//);
  if (at === -1) return undefined;
  const packagePath = /node_modules\/(?:@[^/]+\/)?[^/]+(?:\/node_modules\/(?:@[^/]+\/)?[^/]+)*/;
  return packagePath.exec(relative.slice(at))?.[0];
}

function nameOf(lockKey: string): string {
  return lockKey.slice(lockKey.lastIndexOf("node_modules/") + "node_modules/".length);
}

/** The packages `npm ci --omit=dev` installs. */
function installedForProduction(lockfile: Lockfile): string[] {
  return Object.entries(lockfile.packages)
    .filter(([key, entry]) => key !== "" && !entry.dev)
    .map(([key]) => key);
}

async function licenceText(root: string, lockKey: string): Promise<string | undefined> {
  const folder = path.join(root, lockKey);
  const names = await readdir(folder).catch(() => [] as string[]);
  const file = names.find((name) => /^(licen[cs]e|copying|notice)(\.|$)/i.test(name));
  return file ? (await readFile(path.join(folder, file), "utf8")).trim() : undefined;
}

export async function writeReleaseNotices(options: {
  root: string;
  outDir: string;
  /** Lockfile keys of the packages whose modules the bundles hold. */
  bundled: Iterable<string>;
}): Promise<{ packages: number }> {
  const { root, outDir } = options;
  const lockfile = JSON.parse(await readFile(path.join(root, "package-lock.json"), "utf8")) as Lockfile;
  const keys = [...new Set([...options.bundled, ...installedForProduction(lockfile)])]
    .filter((key) => lockfile.packages[key])
    .sort((a, b) => nameOf(a).localeCompare(nameOf(b)) || a.localeCompare(b));

  const components = keys.map((key) => {
    const entry = lockfile.packages[key] as LockedPackage;
    const name = nameOf(key);
    const purl = `pkg:npm/${name.startsWith("@") ? `%40${name.slice(1)}` : name}@${entry.version}`;
    return {
      type: "library",
      "bom-ref": `${name}@${entry.version}`,
      name,
      version: entry.version,
      purl,
      ...(entry.license ? { licenses: [{ expression: entry.license }] } : {}),
    };
  });
  const sbom = {
    bomFormat: "CycloneDX",
    specVersion: "1.5",
    version: 1,
    metadata: {
      component: {
        type: "application",
        "bom-ref": `${lockfile.name}@${lockfile.version}`,
        name: lockfile.name,
        version: lockfile.version,
      },
      tools: { components: [{ type: "application", name: "scripts/release-notices.ts" }] },
    },
    components,
  };
  await writeFile(path.join(outDir, "sbom.cdx.json"), `${JSON.stringify(sbom, null, 2)}\n`);

  const sections: string[] = [];
  for (const key of keys) {
    const entry = lockfile.packages[key] as LockedPackage;
    const text = await licenceText(root, key);
    sections.push(
      [
        `${nameOf(key)} ${entry.version} (${entry.license ?? "no licence declared"})`,
        text ?? `The package ships no licence file; its package.json declares ${entry.license ?? "none"}.`,
      ].join("\n\n"),
    );
  }
  const header = `Lab Console ${lockfile.version} carries the following packages, with their licences.\n`;
  await writeFile(
    path.join(outDir, "THIRD-PARTY-LICENSES.txt"),
    `${header}\n${sections.join(`\n\n${"-".repeat(72)}\n\n`)}\n`,
  );
  return { packages: keys.length };
}
