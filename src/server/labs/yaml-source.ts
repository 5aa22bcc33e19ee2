// Parses YAML that people wrote (lab files, their cloud-init) without letting hostile input hurt the
// server, and remembers where each value came from so problems can name a line.
import {
  Composer,
  CST,
  LineCounter,
  Parser,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Document,
  type Node,
} from "yaml";

export interface YamlProblem {
  line: number | null;
  message: string;
}

export type YamlPath = readonly PropertyKey[];

export interface YamlSource {
  /** The document as plain JavaScript; null for an empty document. */
  value: unknown;
  /** The 1-based line of the value at `path`, or of its nearest ancestor that exists. */
  lineOf(path: YamlPath): number | null;
  /** The node at `path`, when it exists. */
  nodeAt(path: YamlPath): Node | null;
  /** The 1-based line of a character offset, e.g. of a node's range. */
  lineAt(offset: number): number;
}

// A lab file needs 3 levels and cloud-init a handful more. The limit matters because yaml composes
// recursively: a deep enough document overflows the stack, and a second overflow in the same process
// has been seen to abort Node outright (V8's regexp compiler runs out of stack) rather than throw.
export const maxYamlDepth = 32;
// Alias expansion is how a few hundred bytes become gigabytes ("billion laughs").
export const maxYamlAliasCount = 100;

export function parseYaml(
  text: string,
): { ok: true; source: YamlSource } | { ok: false; problems: YamlProblem[] } {
  const lineCounter = new LineCounter();
  const lineAt = (offset: number) => lineCounter.linePos(offset).line;
  // The parser builds its tree iteratively, so it is safe at any depth; only then do we compose.
  const tokens = Array.from(new Parser(lineCounter.addNewLine).parse(text));
  const tooDeep = findNestingBeyond(tokens, maxYamlDepth);
  if (tooDeep !== null) {
    return {
      ok: false,
      problems: [{ line: lineAt(tooDeep), message: `YAML nested deeper than ${maxYamlDepth} levels` }],
    };
  }

  const documents = Array.from(new Composer({ uniqueKeys: true }).compose(tokens, true, text.length));
  const [document, second] = documents;
  if (!document) return { ok: false, problems: [{ line: null, message: "could not read the YAML" }] };
  if (second) {
    const line = lineAt(second.range[0]);
    return { ok: false, problems: [{ line, message: "holds more than one YAML document (remove the ---)" }] };
  }
  if (document.errors.length > 0) {
    return {
      ok: false,
      problems: document.errors.map((error) => ({
        line: lineAt(error.pos[0]),
        message: firstLine(error.message),
      })),
    };
  }

  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: maxYamlAliasCount });
  } catch (error) {
    // yaml throws a ReferenceError for alias bombs; anything else is equally a reason to refuse.
    const reason = error instanceof ReferenceError ? "uses too many YAML aliases" : "could not be read";
    return { ok: false, problems: [{ line: null, message: reason }] };
  }

  const nodeAt = (path: YamlPath) => locate(document, path).node;
  const lineOf = (path: YamlPath) => {
    const { node, keyNode } = locate(document, path);
    const offset = (keyNode ?? node)?.range?.[0];
    return offset === undefined ? null : lineAt(offset);
  };
  return { ok: true, source: { value: value ?? null, lineOf, nodeAt, lineAt } };
}

/** The offset of the first collection nested deeper than `limit`, or null. */
function findNestingBeyond(tokens: CST.Token[], limit: number): number | null {
  const pending: { token: CST.Token; depth: number }[] = tokens.map((token) => ({ token, depth: 0 }));
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { token, depth } = next;
    if (token.type === "document") {
      if (token.value) pending.push({ token: token.value, depth });
    } else if (CST.isCollection(token)) {
      if (depth + 1 > limit) return token.offset;
      for (const item of token.items) {
        if (item.key) pending.push({ token: item.key, depth: depth + 1 });
        if (item.value) pending.push({ token: item.value, depth: depth + 1 });
      }
    }
  }
  return null;
}

/**
 * Walks `path` through the document. Stops at the deepest part that exists, so a problem with a
 * missing key points at the mapping that should hold it. For a mapping entry, keyNode is its key:
 * "size: huge" is best reported on the key's line even when the value is a block on later lines.
 */
function locate(document: Document, path: YamlPath): { node: Node | null; keyNode: Node | null } {
  let node: unknown = document.contents;
  let keyNode: Node | null = null;
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(document);
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isScalar(item.key) && String(item.key.value) === String(segment),
      );
      if (!pair || !isScalar(pair.key)) break;
      keyNode = pair.key;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === "number" && node.items[segment] !== undefined) {
      keyNode = null;
      node = node.items[segment];
    } else {
      break;
    }
  }
  const found = isMap(node) || isSeq(node) || isScalar(node) || isAlias(node) ? node : null;
  return { node: found, keyNode };
}

function firstLine(message: string): string {
  return message.split("\n", 1)[0] ?? message;
}
