// Lab files come from people; the loader must turn anything at all into labs or problems, never a crash.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultVmSizes, loadLabs } from "./load-labs.ts";

const examplesDir = new URL("../../../labs", import.meta.url).pathname;

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function labDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "hostile-labs-"));
  made.push(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

const lab = (extra: string) =>
  `id: hostile\ntitle: Hostile\nvm:\n  size: small\n  image: quay.io/containerdisks/fedora:41\n${extra}`;

describe("loadLabs with hostile input", () => {
  it("refuses an alias bomb", () => {
    const anchors = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
    for (const [index, name] of [..."bcdefghi"].entries()) {
      const previous = "abcdefghi"[index];
      anchors.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(", ")}]`);
    }
    const { problems } = loadLabs(labDir({ "bomb.yaml": anchors.join("\n") }), defaultVmSizes);
    expect(problems.map((problem) => problem.message)).toEqual(["uses too many YAML aliases"]);
  });

  it("refuses deep nesting in several files in a row without overflowing the stack", () => {
    // One such file used to be survivable; the second stack overflow in a process can abort Node.
    const depth = 25_000;
    const { problems } = loadLabs(
      labDir({
        "flow.yaml": `id: ${"[".repeat(depth)}${"]".repeat(depth)}\n`,
        "block.yaml": `id: x\nchecks:\n  ${"- ".repeat(depth)}x\n`,
        "mixed.yaml": `id: ${"{a: [".repeat(depth / 5)}${"]}".repeat(depth / 5)}\n`,
        "cloud-init.yaml": lab(`  cloudInit: |\n    #cloud-config\n    a: ${"[".repeat(depth)}\n`),
      }),
      defaultVmSizes,
    );
    expect(problems.map((problem) => [problem.file.split("/").pop(), problem.line, problem.message])).toEqual(
      [
        ["block.yaml", 3, "YAML nested deeper than 32 levels"],
        ["cloud-init.yaml", 8, "vm.cloudInit: YAML nested deeper than 32 levels"],
        ["flow.yaml", 1, "YAML nested deeper than 32 levels"],
        ["mixed.yaml", 1, "YAML nested deeper than 32 levels"],
      ],
    );
  });

  it("treats __proto__ as an unknown field and pollutes nothing", () => {
    const { labs, problems } = loadLabs(
      labDir({ "proto.yaml": `__proto__: { polluted: true }\n${lab("checks: []\n")}` }),
      defaultVmSizes,
    );
    expect(labs).toEqual([]);
    expect(problems.map((problem) => `${problem.line}: ${problem.message}`)).toEqual([
      "1: __proto__: unknown field",
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("turns hundreds of mangled example labs into labs or problems with real line numbers", () => {
    const random = seededRandom(20260822);
    const examples = readdirSync(examplesDir).map((name) => readFileSync(join(examplesDir, name), "utf8"));
    const files: Record<string, string> = {};
    for (let index = 0; index < 250; index++) {
      files[`mangled-${String(index).padStart(3, "0")}.yaml`] = mangle(
        examples[index % examples.length] ?? "",
        random,
      );
    }
    const dir = labDir(files);

    const { labs, problems } = loadLabs(dir, defaultVmSizes);

    const withProblems = new Set(problems.map((problem) => problem.file));
    // Every file either loaded (and then only the first of each id) or has a problem.
    expect(labs.length + withProblems.size).toBeGreaterThanOrEqual(Object.keys(files).length);
    expect(withProblems.size).toBeGreaterThan(60);
    for (const problem of problems) {
      const lines = (files[problem.file.slice(dir.length + 1)] ?? "").split("\n").length;
      expect(problem.message.length).toBeGreaterThan(0);
      if (problem.line !== null) expect(problem.line).toBeGreaterThanOrEqual(1);
      if (problem.line !== null) expect(problem.line).toBeLessThanOrEqual(lines);
    }
  });
});

/** Deletes, duplicates, and inserts YAML's own punctuation at random places. */
function mangle(text: string, random: () => number): string {
  const punctuation = [
    ":",
    "- ",
    "[",
    "]",
    "{",
    "}",
    "&a ",
    "*a",
    "!!binary ",
    "|",
    ">",
    "'",
    '"',
    "#",
    "\t",
    "\n",
    "  ",
    "? ",
    "---\n",
    "\u0000",
    "é",
    "🙂",
  ];
  let result = text;
  const edits = 1 + Math.floor(random() * 4);
  for (let edit = 0; edit < edits; edit++) {
    const at = Math.floor(random() * result.length);
    const length = Math.floor(random() * 12);
    const choice = random();
    if (choice < 0.35) result = result.slice(0, at) + result.slice(at + length);
    else if (choice < 0.5)
      result = result.slice(0, at) + result.slice(at, at + length).repeat(2) + result.slice(at + length);
    else
      result =
        result.slice(0, at) +
        (punctuation[Math.floor(random() * punctuation.length)] ?? "") +
        result.slice(at);
  }
  return result;
}

/** mulberry32: the same mangled files on every run, so a failure can be reproduced. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
