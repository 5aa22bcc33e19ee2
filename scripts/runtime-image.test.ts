// The image the Containerfile builds, without a registry or a container engine: its last stage laid
// out in a folder (production `npm ci --omit=dev`, dist/ from `npm run build`, package.json and
// LICENSE), then run as the Deployment runs it: uid 1000, a read-only root with no shell in it, only
// the data folder and /tmp writable. Against the emulator with real guests, it signs in, launches a
// lab, types in its console and self-checks it; the doctor and sign-out-user run from it too.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../src/emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../src/server/console/testing/console-client.ts";
import { launchRunning, TestBrowser, testNamespace } from "../src/server/testing/test-bff.ts";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");
/** What must never be in the image: the tools that build it. */
const buildTools = [
  "tsx",
  "esbuild",
  "vite",
  "rolldown",
  "typescript",
  "@vitejs/plugin-react",
  "vitest",
  "eslint",
];
/**
 * What Node 22 and later warn about in code the BFF bundles: node-fetch 2, inside
 * @kubernetes/client-node, loads the `punycode` module and calls `url.parse()`. Warnings, not
 * errors, printed once each; any other line still counts.
 */
const knownDeprecation =
  /^\(node:\d+\) \[(DEP0040|DEP0169)\] DeprecationWarning: |^\(Use `node --trace-deprecation /;

let work: string;
let app: string;
let emulator: TestEmulator;
let bff: { url: string; child: ChildProcess; output: string[] };

/** bubblewrap arguments for the image's root: Node and its libraries, /app, nothing else writable. */
function imageRoot(dataDir: string, kubeconfigDir: string): string[] {
  return [
    "--unshare-user",
    "--uid",
    "1000",
    "--gid",
    "1000",
    "--unshare-pid",
    "--die-with-parent",
    "--ro-bind",
    "/usr/lib",
    "/usr/lib",
    "--ro-bind",
    "/usr/lib64",
    "/usr/lib64",
    "--symlink",
    "usr/lib",
    "/lib",
    "--symlink",
    "usr/lib64",
    "/lib64",
    // Where the distroless Node image has it; there is no /bin, so no shell either.
    "--ro-bind",
    process.execPath,
    "/nodejs/bin/node",
    "--ro-bind",
    app,
    "/app",
    "--bind",
    dataDir,
    "/app/.lab",
    "--ro-bind",
    path.join(root, "labs"),
    "/app/labs",
    "--ro-bind",
    kubeconfigDir,
    "/var/run/lab",
    "--tmpfs",
    "/tmp",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--remount-ro",
    "/",
    "--chdir",
    "/app",
    "--clearenv",
    ...Object.entries({
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: "0",
      DATA_DIR: "/app/.lab",
      LABS_DIR: "/app/labs",
      LAB_KUBECONFIG: "/var/run/lab/kubeconfig",
      LAB_NAMESPACE: testNamespace,
      AUTH_MODE: "demo",
    }).flatMap(([name, value]) => ["--setenv", name, value]),
  ];
}

function inImage(args: string[]): string[] {
  return [...imageRoot(path.join(work, "data"), path.join(work, "kube")), "/nodejs/bin/node", ...args];
}

async function startImage(): Promise<typeof bff> {
  const child = spawn("bwrap", inImage(["dist/server/main.js"]), { stdio: ["ignore", "pipe", "pipe"] });
  const output: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        output.push(line);
        const banner = /^Lab Console: (http:\/\/\S+)/.exec(line);
        if (banner) resolve(banner[1]!);
      });
    }
    child.once("exit", (code) => reject(new Error(`the image exited (${code}):\n${output.join("\n")}`)));
  });
  return { url, child, output };
}

/** The sources the Containerfile's build stage copies (its COPY lines without --from), each to its place. */
async function buildStageSources(into: string): Promise<void> {
  const containerfile = await readFile(path.join(root, "Containerfile"), "utf8");
  const stage = /^FROM \S+ AS build$([\s\S]*?)^FROM /m.exec(containerfile)?.[1] ?? "";
  const topLevel = await readdir(root);
  for (const [, line] of stage.matchAll(/^COPY (?!--)(.+)$/gm)) {
    const parts = (line ?? "").split(/\s+/);
    const destination = path.join(into, parts.pop() ?? "");
    // A wildcard matches names in the checkout's top folder, the only place this Containerfile uses one.
    const sources = parts.flatMap((part) =>
      part.includes("*") ? topLevel.filter((name) => globPattern(part).test(name)) : [part],
    );
    for (const source of sources) {
      const target = destination.endsWith("/") ? path.join(destination, source) : destination;
      await cp(path.join(root, source), target, { recursive: true });
    }
  }
}

function globPattern(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join("[^/]*")}$`,
  );
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "lab-runtime-image-"));
  app = path.join(work, "app");
  const build = path.join(work, "build");
  await mkdir(path.join(work, "data"));
  await mkdir(path.join(work, "kube"));
  // The build stage: its sources, all dependencies (`npm ci`, here the checkout's), `npm run build`.
  await buildStageSources(build);
  await symlink(path.join(root, "node_modules"), path.join(build, "node_modules"));
  await run("npm", ["run", "build"], { cwd: build, maxBuffer: 16 << 20 });
  // The runtime stage: dist/ from the build, a production `npm ci --omit=dev`, package.json, LICENSE.
  await cp(path.join(build, "dist"), path.join(app, "dist"), { recursive: true });
  for (const file of ["package.json", "package-lock.json", "LICENSE"]) {
    await copyFile(path.join(root, file), path.join(app, file));
  }
  await run("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund", "--prefer-offline"], {
    cwd: app,
    maxBuffer: 16 << 20,
  });
  await rm(path.join(app, "package-lock.json"));
  // Mount points: Kubernetes makes them in the image; a read-only bind needs them made beforehand.
  await mkdir(path.join(app, ".lab"));
  await mkdir(path.join(app, "labs"));

  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  await copyFile(emulator.bffKubeconfigPath(), path.join(work, "kube", "kubeconfig"));
  bff = await startImage();
}, 600_000);

afterAll(async () => {
  if (bff) {
    const exited = new Promise((resolve) => bff.child.once("exit", resolve));
    bff.child.kill("SIGTERM");
    await exited;
  }
  await emulator?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("the runtime image", () => {
  it("is what the Containerfile's last stage copies", async () => {
    const containerfile = await readFile(path.join(root, "Containerfile"), "utf8");
    const runtime = containerfile.slice(containerfile.lastIndexOf("\nFROM "));
    expect([...runtime.matchAll(/^COPY .+$/gm)].map(([line]) => line)).toEqual([
      "COPY --from=production-dependencies /app/node_modules node_modules",
      "COPY --from=build /src/dist dist",
      "COPY package.json LICENSE ./",
    ]);
    expect(containerfile).toMatch(/AS production-dependencies\n(.+\n)*RUN npm ci --omit=dev /);
    expect(runtime).toContain('ENTRYPOINT ["/nodejs/bin/node", "dist/server/main.js"]');
  });

  it("runs the Node major and Debian release that built its native module", async () => {
    const containerfile = await readFile(path.join(root, "Containerfile"), "utf8");
    const debianRelease: Record<string, string> = { bookworm: "12", trixie: "13" };
    const major = /^ARG NODE_VERSION=(\d+)$/m.exec(containerfile)?.[1];
    const builders = [...containerfile.matchAll(/^FROM \S+\/node:\$\{NODE_VERSION\}-(\w+) AS /gm)].map(
      ([, suite]) => debianRelease[suite ?? ""],
    );
    const runtime = /^FROM gcr\.io\/distroless\/nodejs(\d+)-debian(\d+) AS runtime$/m.exec(containerfile);
    expect(major).toBeDefined();
    expect(runtime?.[1]).toBe(major);
    expect(builders).toEqual([runtime?.[2], runtime?.[2]]);
  });

  it("holds dist/, the production dependencies, package.json and LICENSE, and no build tool", async () => {
    expect((await readdir(app)).sort()).toEqual([
      ".lab",
      "LICENSE",
      "dist",
      "labs",
      "node_modules",
      "package.json",
    ]);
    const { stdout } = await run("npm", ["ls", "--omit=dev", "--all", "--parseable"], { cwd: app });
    const installed = stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => path.relative(path.join(app, "node_modules"), line));
    expect(installed).toContain("better-sqlite3");
    for (const tool of buildTools) expect(installed.filter((name) => name.endsWith(tool))).toEqual([]);
    const shipped = await readdir(path.join(app, "dist"), { recursive: true });
    expect(shipped.filter((file) => /\.tsx?$|\.test\.|(^|\/)testing\//.test(file))).toEqual([]);
  });

  it("runs read-only as uid 1000 and serves the SPA", async () => {
    const logged = bff.output.filter((line) => !knownDeprecation.test(line));
    expect(logged.join("\n")).not.toMatch(/EROFS|EACCES|error/i);
    const page = await fetch(`${bff.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js">/);
  });

  it("launches a lab, types in its console and self-checks it", async () => {
    const alice = new TestBrowser(bff.url);
    expect((await alice.post("/api/auth/login", { username: "alice", password: "demo" })).status).toBe(200);
    const session = await launchRunning(alice, "linux-basics");

    const console = await ConsoleTestClient.connect(bff.url, session, {
      cookie: await signInCookie(bff.url, "alice"),
    });
    try {
      await console.untilLive();
      console.type("echo hello > ~/hello.txt; echo wr''itten\r");
      await console.untilScreenShows("written");
    } finally {
      console.close();
    }

    const check = await alice.post(`/api/sessions/${session}/checks`);
    expect(check.status).toBe(201);
    expect(check.body.result).toMatchObject({ gradable: true, owner: "alice" });
    expect(check.body.result.checks).toContainEqual(
      expect.objectContaining({ checkId: "hello-file", passed: true }),
    );
  });

  it("runs the doctor and sign-out-user from dist/, in the same root", async () => {
    const doctor = await run("bwrap", inImage(["dist/server/cli/doctor.js", "--json"])).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => error,
    );
    expect([0, 1]).toContain(doctor.code);
    const report = JSON.parse(doctor.stdout) as { checks: { id: string; status: string }[] };
    expect(report.checks.find((check) => check.id === "permissions")?.status).toBe("ok");

    const { stdout } = await run("bwrap", inImage(["dist/server/cli/sign-out-user.js", "bob"]));
    expect(stdout).toContain("bob");
  });

  it("carries a bill of materials and the licences of everything in it", async () => {
    const sbom = JSON.parse(await readFile(path.join(app, "dist/sbom.cdx.json"), "utf8")) as {
      bomFormat: string;
      components: { name: string; version: string; licenses?: unknown[] }[];
    };
    expect(sbom.bomFormat).toBe("CycloneDX");
    const listed = new Set(sbom.components.map(({ name, version }) => `${name}@${version}`));
    // What npm sees installed, and what the bundles hold (the SPA's React, the BFF's Fastify).
    const { stdout } = await run(
      "npm",
      ["sbom", "--omit=dev", "--package-lock-only", "--sbom-format", "cyclonedx"],
      { cwd: root, maxBuffer: 16 << 20 },
    );
    const installed = (
      JSON.parse(stdout) as { components: { name: string; group?: string; version: string }[] }
    ).components;
    for (const component of installed) {
      const name = component.group ? `${component.group}/${component.name}` : component.name;
      expect(listed).toContain(`${name}@${component.version}`);
    }
    const names = sbom.components.map((component) => component.name);
    for (const bundled of [
      "react",
      "react-dom",
      "@xterm/xterm",
      "fastify",
      "@kubernetes/client-node",
      "zod",
    ]) {
      expect(names).toContain(bundled);
    }
    const licences = await readFile(path.join(app, "dist/THIRD-PARTY-LICENSES.txt"), "utf8");
    for (const { name, version } of sbom.components) expect(licences).toContain(`${name} ${version} (`);
  });
});
