// File and folder names are kebab-case (lower-case words joined by hyphens, then the extensions), as
// bulletproof-react's lint enforces: one spelling to search for, and no two files that differ only in
// case on a case-insensitive disk. A Python file may also be snake_case: one that Python imports as a
// module (the agent, which its tests import) cannot have a hyphen in its name.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../project-root.ts";

const roots = ["src", "e2e", "scripts", "bench", "labs", "deploy", "docs"];
const skipped = new Set(["node_modules", "__pycache__", "dist"]);
const kebab = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const snake = /^[a-z0-9]+(_[a-z0-9]+)*$/;

function wrongNames(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (skipped.has(name) || name.startsWith(".")) return [];
    const full = path.join(dir, name);
    const relative = path.relative(projectRoot, full);
    if (statSync(full).isDirectory()) return [...(kebab.test(name) ? [] : [relative]), ...wrongNames(full)];
    return isWellNamed(name) ? [] : [relative];
  });
}

function isWellNamed(file: string): boolean {
  const [stem = "", ...extensions] = file.split(".");
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
      ["shared-console.ts", "lab_agent.py", "en.json", "README.md", "api.test.ts"].every(isWellNamed),
    ).toBe(true);
    expect(["sharedConsole.ts", "Shared-console.ts", "LabAgent.py", "a_b.ts"].some(isWellNamed)).toBe(false);
  });
});
