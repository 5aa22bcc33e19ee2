// File and folder names are kebab-case (lower-case words joined by hyphens, then the extensions), as
// bulletproof-react's lint enforces: one spelling to search for, and no two files that differ only in
// case on a case-insensitive disk. A Python file may also be snake_case: one that Python imports as a
// module (the agent's) cannot have a hyphen in its name; so may a folder of Python modules, as a
// package's is; and Python's own names (__main__.py) keep their spelling.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../project-root.ts";

const roots = ["src", "e2e", "scripts", "bench", "labs", "deploy", "docs"];
const skipped = new Set(["node_modules", "__pycache__", "dist"]);
const kebab = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const snake = /^[a-z0-9]+(_[a-z0-9]+)*$/;
const pythonOwnNames = /^__(main|init)__\.py$/;

function wrongNames(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (skipped.has(name) || name.startsWith(".")) return [];
    const full = path.join(dir, name);
    const relative = path.relative(projectRoot, full);
    if (statSync(full).isDirectory())
      return [...(isWellNamedFolder(full) ? [] : [relative]), ...wrongNames(full)];
    return isWellNamed(name) ? [] : [relative];
  });
}

function isWellNamedFolder(folder: string): boolean {
  const name = path.basename(folder);
  const pythonPackage = readdirSync(folder).some((file) => pythonOwnNames.test(file));
  return kebab.test(name) || (pythonPackage && snake.test(name));
}

function isWellNamed(file: string): boolean {
  const [stem = "", ...extensions] = file.split(".");
  if (pythonOwnNames.test(file)) return true;
  if (extensions.at(-1) === "py") return kebab.test(stem) || snake.test(stem);
  // Names other tools look for keep their spelling: README.md, Dockerfile.
  if (/^(README|Dockerfile|LICENSE)$/.test(stem)) return true;
  return kebab.test(stem) && extensions.every((extension) => kebab.test(extension));
}

describe("file names", () => {
  it("are kebab-case everywhere the project's own files are", () => {
    expect(roots.flatMap((root) => wrongNames(path.join(projectRoot, root)))).toEqual([]);
  });

  it("tells a wrong name from a right one", () => {
    expect(
      ["shared-console.ts", "run_as.py", "__main__.py", "en.json", "README.md", "api.test.ts"].every(
        isWellNamed,
      ),
    ).toBe(true);
    expect(
      ["sharedConsole.ts", "Shared-console.ts", "LabAgent.py", "a_b.ts", "__x__.py"].some(isWellNamed),
    ).toBe(false);
  });
});
