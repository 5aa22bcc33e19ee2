import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fingerprintOf, isCurrent, stampFileOf } from "./build-stamps.js";

let checkout: string;
let outDir: string;

beforeEach(async () => {
  checkout = await mkdtemp(path.join(tmpdir(), "build-stamps-"));
  outDir = path.join(checkout, "dist");
  const files = [
    "src/web/app.tsx",
    "src/server/main.ts",
    "src/emulator/guests/guest.ts",
    "src/common/lab.ts",
  ];
  for (const file of [...files, "package.json"]) {
    await mkdir(path.dirname(path.join(checkout, file)), { recursive: true });
    await writeFile(path.join(checkout, file), "first");
  }
  await mkdir(path.join(outDir, ".build"), { recursive: true });
});

afterEach(() => rm(checkout, { recursive: true, force: true }));

const stamp = (part: "web" | "node") => writeFile(stampFileOf(outDir, part), fingerprintOf(part, checkout));

describe("build stamps", () => {
  it("finds a part out of date until its build stamped it", async () => {
    expect(isCurrent(outDir, "node", checkout)).toBe(false);
    await stamp("node");
    expect(isCurrent(outDir, "node", checkout)).toBe(true);
  });

  it("finds only the parts whose inputs changed out of date", async () => {
    await stamp("web");
    await stamp("node");
    await writeFile(path.join(checkout, "src/server/main.ts"), "second");
    expect(isCurrent(outDir, "node", checkout)).toBe(false);
    expect(isCurrent(outDir, "web", checkout)).toBe(true);

    await writeFile(path.join(checkout, "src/common/lab.ts"), "shared by both");
    expect(isCurrent(outDir, "web", checkout)).toBe(false);
  });

  it("counts a new file, and not Python's caches", async () => {
    await stamp("node");
    await mkdir(path.join(checkout, "src/emulator/guests/__pycache__"), { recursive: true });
    await writeFile(path.join(checkout, "src/emulator/guests/__pycache__/relay.cpython-311.pyc"), "x");
    expect(isCurrent(outDir, "node", checkout)).toBe(true);
    await writeFile(path.join(checkout, "src/emulator/guests/relay.py"), "x");
    expect(isCurrent(outDir, "node", checkout)).toBe(false);
  });
});
