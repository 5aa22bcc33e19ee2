// Folders depend one way: no folder of src/server, src/emulator or src/web imports, directly or
// through other folders, a folder that imports it. A folder's imports of its own subfolders count, so
// a subfolder that reaches back to its parent is a cycle too. Tests and testing/ folders are left
// out: they may reach anywhere. Imports are read from the syntax tree, so commented-out code is not
// an import, and type-only imports count, since they tie the folders together as much as any other.
// Inside src/server no file reaches itself through the imports that run either: a module in such a
// cycle can be used before it has finished loading. There type-only imports (`import type`, or every
// name marked `type`) are left out, since they are erased before the code runs.
// A failure lists, for every import between folders (or files) that lies on a cycle, the shortest
// such cycle, with one import for each of its steps.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../project-root.ts";

const scannedRoots = ["src/server", "src/emulator", "src/web"];

interface ModuleImport {
  specifier: string;
  /** Erased before the code runs: nothing of the module is loaded for it. */
  typeOnly: boolean;
}

/** True for `import type`/`export type`, and for `import { type A, type B }` with nothing else. */
function isTypeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) {
    const clause = node.exportClause;
    if (node.isTypeOnly) return true;
    return clause !== undefined && ts.isNamedExports(clause) && allTypes(clause.elements);
  }
  const clause = node.importClause;
  if (clause === undefined) return false;
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return (
    clause.name === undefined &&
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    allTypes(bindings.elements)
  );
}

const allTypes = (elements: ts.NodeArray<ts.ImportSpecifier | ts.ExportSpecifier>) =>
  elements.length > 0 && elements.every((element) => element.isTypeOnly);

/** Every module the text names: imports, re-exports, `import()` of a literal, import types. */
function moduleImports(fileName: string, text: string): ModuleImport[] {
  const kind = fileName.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, kind);
  const found: ModuleImport[] = [];
  const literal = (node: ts.Node | undefined, typeOnly: boolean) => {
    if (node !== undefined && ts.isStringLiteralLike(node)) found.push({ specifier: node.text, typeOnly });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      literal(node.moduleSpecifier, isTypeOnly(node));
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      literal(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      literal(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      literal(node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const isSource = (file: string) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file);

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === "testing" ? [] : sourceFiles(full);
    return isSource(entry.name) ? [full] : [];
  });
}

const isFile = (file: string) => statSync(file, { throwIfNoEntry: false })?.isFile() === true;

/** The file a relative specifier names, the way the bundlers find it; undefined if none. */
function resolveRelative(fromFile: string, specifier: string): string | undefined {
  // Vite's suffixes (?raw, ?url) name the same file.
  const target = path.resolve(path.dirname(fromFile), specifier.replace(/\?.*$/, ""));
  const candidates = [target, `${target}.ts`, `${target}.tsx`, path.join(target, "index.ts")];
  return candidates.find(isFile);
}

interface Import {
  file: string;
  target: string;
}

interface FolderGraph {
  /** From folder (or file) to the folders it imports, each with the imports that make the edge. */
  edges: Map<string, Map<string, Import[]>>;
  unresolved: string[];
}

interface GraphOptions {
  roots: string[];
  /** What an importing or imported file counts as: its folder, or itself. */
  nodeOf: (file: string) => string;
  counts: (imported: ModuleImport) => boolean;
}

function importGraph({ roots, nodeOf, counts }: GraphOptions): FolderGraph {
  const edges = new Map<string, Map<string, Import[]>>();
  const unresolved: string[] = [];
  const relative = (file: string) => path.relative(projectRoot, file);
  for (const root of roots) {
    for (const file of sourceFiles(path.join(projectRoot, root))) {
      for (const imported of moduleImports(file, readFileSync(file, "utf8"))) {
        const { specifier } = imported;
        if (!specifier.startsWith(".") || !counts(imported)) continue;
        const target = resolveRelative(file, specifier);
        if (target === undefined) {
          unresolved.push(`${relative(file)}: ${specifier}`);
          continue;
        }
        const from = relative(nodeOf(file));
        const to = relative(nodeOf(target));
        if (from === to) continue;
        const out = edges.get(from) ?? new Map<string, Import[]>();
        edges.set(from, out);
        const imports = out.get(to) ?? [];
        out.set(to, imports);
        imports.push({ file: relative(file), target: relative(target) });
      }
    }
  }
  return { edges, unresolved };
}

const sortedTargets = (edges: FolderGraph["edges"], folder: string) =>
  [...(edges.get(folder)?.keys() ?? [])].sort();

/** The groups of two or more folders that each reach all the others (Tarjan's algorithm). */
function tangledGroups(edges: FolderGraph["edges"]): string[][] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (folder: string) => {
    index.set(folder, index.size);
    lowLink.set(folder, index.get(folder) as number);
    stack.push(folder);
    onStack.add(folder);
    for (const next of sortedTargets(edges, folder)) {
      if (!index.has(next)) {
        connect(next);
        lowLink.set(folder, Math.min(lowLink.get(folder) as number, lowLink.get(next) as number));
      } else if (onStack.has(next)) {
        lowLink.set(folder, Math.min(lowLink.get(folder) as number, index.get(next) as number));
      }
    }
    if (lowLink.get(folder) !== index.get(folder)) return;
    const group: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      group.push(member);
    } while (member !== folder);
    if (group.length > 1) groups.push(group.sort());
  };
  for (const folder of [...edges.keys()].sort()) if (!index.has(folder)) connect(folder);
  return groups;
}

/** The shortest way from one folder to another through the given folders: [from, ..., to]. */
function shortestPath(edges: FolderGraph["edges"], from: string, to: string, within: Set<string>): string[] {
  const cameFrom = new Map<string, string>([[from, from]]);
  const queue = [from];
  for (let folder = queue.shift(); folder !== undefined && folder !== to; folder = queue.shift()) {
    for (const next of sortedTargets(edges, folder)) {
      if (within.has(next) && !cameFrom.has(next)) {
        cameFrom.set(next, folder);
        queue.push(next);
      }
    }
  }
  const steps = [to];
  while (steps[0] !== from) steps.unshift(cameFrom.get(steps[0] as string) as string);
  return steps;
}

/**
 * For every import between two folders of a tangled group, the shortest cycle through it, each cycle
 * once and starting at its least folder. Every edge on a cycle shows up, without the thousands of
 * combinations a list of all elementary cycles would grow to in a large group.
 */
function folderCycles(edges: FolderGraph["edges"]): string[][] {
  const cycles = new Map<string, string[]>();
  for (const group of tangledGroups(edges)) {
    const members = new Set(group);
    for (const from of group) {
      for (const to of sortedTargets(edges, from).filter((target) => members.has(target))) {
        const cycle = [from, ...shortestPath(edges, to, from, members).slice(0, -1)];
        const least = cycle.indexOf([...cycle].sort()[0] as string);
        const rotated = [...cycle.slice(least), ...cycle.slice(0, least)];
        cycles.set(rotated.join("\0"), rotated);
      }
    }
  }
  return [...cycles.keys()].sort().map((key) => cycles.get(key) as string[]);
}

/** A cycle, and under it one import for each step: where to look to cut it. */
function describeCycle(cycle: string[], edges: FolderGraph["edges"]): string {
  const steps = cycle.map((from, index) => {
    const to = cycle[(index + 1) % cycle.length] as string;
    const imports = edges.get(from)?.get(to) ?? [];
    const [first] = imports;
    const more = imports.length > 1 ? ` and ${imports.length - 1} more` : "";
    return `${from} → ${to} (${first?.file} imports ${first?.target}${more})`;
  });
  return `${cycle.join(" → ")} → ${cycle[0]}\n    ${steps.join("\n    ")}`;
}

describe("folder dependencies", () => {
  const { edges, unresolved } = importGraph({
    roots: scannedRoots,
    nodeOf: path.dirname,
    counts: () => true,
  });

  it("reads imports from the syntax tree, not from comments or strings", () => {
    const text = `
      // import { a } from "./commented.ts";
      /* export * from "./block-commented.ts"; */
      const text = 'import { b } from "./in-a-string.ts"';
      import type { C } from "./type-only.ts";
      import "./side-effect.css";
      export { d } from "./re-exported.ts";
      const e = await import("./dynamic.ts");
      const f = await import(name);
      let g: import("./import-type.ts").G;
      import { type H } from "./named-types.ts";
      import { type I, j } from "./mixed.ts";
      export type { K } from "./type-export.ts";
    `;
    expect(moduleImports("example.ts", text)).toEqual([
      { specifier: "./type-only.ts", typeOnly: true },
      { specifier: "./side-effect.css", typeOnly: false },
      { specifier: "./re-exported.ts", typeOnly: false },
      { specifier: "./dynamic.ts", typeOnly: false },
      { specifier: "./import-type.ts", typeOnly: true },
      { specifier: "./named-types.ts", typeOnly: true },
      { specifier: "./mixed.ts", typeOnly: false },
      { specifier: "./type-export.ts", typeOnly: true },
    ]);
  });

  it("finds the file behind every relative import", () => {
    expect(unresolved).toEqual([]);
    // The BFF's entry reaches its features: the graph is not empty by mistake.
    expect(edges.get("src/server")?.has("src/server/auth")).toBe(true);
  });

  it("has no cycle between folders", () => {
    const cycles = folderCycles(edges).map((cycle) => describeCycle(cycle, edges));
    expect(cycles.length, `${cycles.length} cycles between folders:\n${cycles.join("\n")}\n`).toBe(0);
  });
});

describe("file dependencies in src/server", () => {
  const { edges } = importGraph({
    roots: ["src/server"],
    nodeOf: (file) => file,
    counts: (imported) => !imported.typeOnly,
  });

  it("has no cycle between files through the imports that run", () => {
    // The graph is not empty by mistake: the app's module imports its features.
    expect(edges.get("src/server/app.ts")?.has("src/server/agent/agents.ts")).toBe(true);
    const cycles = folderCycles(edges).map((cycle) => describeCycle(cycle, edges));
    expect(cycles.length, `${cycles.length} cycles between files:\n${cycles.join("\n")}\n`).toBe(0);
  });
});
