// Ignoring case without the `i` flag, which V8's linear-time engine refuses (Node 20): the text is
// folded to lower case, and a pattern rewritten to match folded text. Folding keeps every string's
// length, so positions found in the folded text index the original.
//
// The rewrite reads the pattern as V8 does without the `u` flag (Annex B): letters outside a class are
// folded; a class keeps its members and gains their folded forms, so that `[A-F]` matches folded
// text as `[A-Fa-f]` would; escapes that name a character (`\x41`, `\u0041`) are folded too. What it
// does not rewrite (octal escapes, surrogate pairs inside a class) keeps its case.

// The only characters whose lower case is not one character of its own, context-free: İ becomes
// "i" plus a combining dot, and Σ becomes ς at the end of a word. Both fold to one character here.
const specialFolds: Readonly<Record<string, string>> = { "\u0130": "i", "\u03a3": "σ", "\u03c2": "σ" };
const special = /[\u0130\u03a3\u03c2]/;
const everySpecial = new RegExp(special.source, "g");

/** `text` in lower case, character by character: the same length, whatever the text. */
export function foldCase(text: string): string {
  const plain = special.test(text) ? text.replace(everySpecial, (found) => specialFolds[found]!) : text;
  return plain.toLowerCase();
}

const surrogatePair = /[\ud800-\udbff][\udc00-\udfff]/y;

/** A pattern (no flags but `g` and `l` to come) that matches folded text as the original ignoring case would. */
export function foldPattern(pattern: string): string {
  let folded = "";
  let index = 0;
  while (index < pattern.length) {
    const char = pattern[index]!;
    if (char === "\\") {
      const escape = readEscape(pattern, index);
      folded += escape.kind === "char" ? asEscape(foldUnit(escape.code)) : foldIdentity(escape.text);
      index = escape.end;
    } else if (char === "[") {
      const end = classEnd(pattern, index);
      folded += foldClass(pattern.slice(index, end));
      index = end;
    } else if (pattern.startsWith("(?<", index) && !"=!".includes(pattern[index + 3] ?? "")) {
      // A group's name is not text to match: kept as written.
      const end = pattern.indexOf(">", index);
      const stop = end < 0 ? pattern.length : end + 1;
      folded += pattern.slice(index, stop);
      index = stop;
    } else {
      // A surrogate pair folds as the one character it is (Deseret, say, has cases).
      surrogatePair.lastIndex = index;
      const length = surrogatePair.test(pattern) ? 2 : 1;
      folded += foldCase(pattern.slice(index, index + length));
      index += length;
    }
  }
  return folded;
}

type Escape =
  /** Stands for one character: `\n`, `\x41`, `\u0041`, `\cJ`, and `\b` in a class. */
  | { kind: "char"; code: number; end: number }
  /** Anything else, kept as written but for an identity escape of a letter: `\d`, `\b`, `\1`, `\k`, `\.`. */
  | { kind: "other"; text: string; end: number };

const controlEscapes: Readonly<Record<string, number>> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };
/** Escapes that mean something as written: classes, assertions, references (in a class, fewer). */
const meaningful = /[bBdDsSwWk0-9]/;
const meaningfulInClass = /[dDsSwW0-9]/;

function readEscape(pattern: string, at: number, inClass = false): Escape {
  const next = pattern[at + 1];
  if (next === undefined) return { kind: "other", text: "\\", end: at + 1 };
  const hex = (length: number) => {
    const digits = pattern.slice(at + 2, at + 2 + length);
    return digits.length === length && /^[0-9a-fA-F]+$/.test(digits)
      ? Number.parseInt(digits, 16)
      : undefined;
  };
  const control = controlEscapes[next];
  if (control !== undefined) return { kind: "char", code: control, end: at + 2 };
  if (next === "b" && inClass) return { kind: "char", code: 0x08, end: at + 2 };
  if (next === "x" && hex(2) !== undefined) return { kind: "char", code: hex(2)!, end: at + 4 };
  if (next === "u" && hex(4) !== undefined) return { kind: "char", code: hex(4)!, end: at + 6 };
  const letter = pattern[at + 2] ?? "";
  if (next === "c" && /[a-zA-Z]/.test(letter)) {
    return { kind: "char", code: letter.charCodeAt(0) % 32, end: at + 3 };
  }
  return { kind: "other", text: `\\${next}`, end: at + 2 };
}

/** An identity escape of a letter (`\M` is "M" without `u`) folds as the letter; other escapes stay. */
function foldIdentity(text: string): string {
  const escaped = text.slice(1);
  if (escaped === "" || meaningful.test(escaped) || foldCase(escaped) === escaped) return text;
  return foldCase(escaped);
}

/** Where the class starting at `at` ends (after its `]`), or the pattern's end when it never does. */
function classEnd(pattern: string, at: number): number {
  let index = at + 1;
  while (index < pattern.length) {
    if (pattern[index] === "\\") index += 2;
    else if (pattern[index] === "]") return index + 1;
    else index += 1;
  }
  return pattern.length;
}

interface ClassItem {
  text: string;
  /** The characters it stands for, when it is a character or a range of them; none for `\d` and the like. */
  range?: { from: number; to: number };
}

/** `[...]` with the folded forms of its members added, e.g. `[A-F_]` to `[A-F_\u0061-\u0066]`. */
function foldClass(whole: string): string {
  if (!whole.endsWith("]") || whole.length < 2) return whole;
  const negated = whole[1] === "^";
  const body = whole.slice(negated ? 2 : 1, -1);
  const items = classItems(body);
  const ranges = items.flatMap((item) => (item.range ? [item.range] : []));
  const added = new Set<number>();
  for (const { from, to } of ranges) {
    for (const code of unitsWithOtherFold(from, to)) {
      const folded = foldUnit(code);
      if (!ranges.some((range) => range.from <= folded && folded <= range.to)) added.add(folded);
    }
  }
  return `[${negated ? "^" : ""}${body}${asRanges([...added])}]`;
}

function classItems(body: string): ClassItem[] {
  const singles: ClassItem[] = [];
  for (let index = 0; index < body.length;) {
    if (body[index] === "\\") {
      const escape = readEscape(body, index, true);
      const literal = escape.kind === "other" && !meaningfulInClass.test(escape.text.slice(1));
      const code = escape.kind === "char" ? escape.code : literal ? escape.text.charCodeAt(1) : undefined;
      const text = body.slice(index, escape.end);
      singles.push(code === undefined ? { text } : { text, range: { from: code, to: code } });
      index = escape.end;
    } else {
      singles.push({
        text: body[index]!,
        range: { from: body.charCodeAt(index), to: body.charCodeAt(index) },
      });
      index += 1;
    }
  }
  // `a-z` is a range when both ends are characters; `\d-z` is three members (Annex B).
  const items: ClassItem[] = [];
  for (let index = 0; index < singles.length; index += 1) {
    const [from, dash, to] = [singles[index]!, singles[index + 1], singles[index + 2]];
    if (dash?.text === "-" && from.range && to?.range) {
      items.push({ text: from.text + "-" + to.text, range: { from: from.range.from, to: to.range.to } });
      index += 2;
    } else {
      items.push(from);
    }
  }
  return items;
}

function foldUnit(code: number): number {
  return foldCase(String.fromCharCode(code)).charCodeAt(0);
}

function asEscape(code: number): string {
  return `\\u${code.toString(16).padStart(4, "0")}`;
}

/** Sorted codes as class members, runs as ranges. */
function asRanges(codes: number[]): string {
  codes.sort((a, b) => a - b);
  let text = "";
  for (let index = 0; index < codes.length;) {
    let end = index;
    while (end + 1 < codes.length && codes[end + 1] === codes[end]! + 1) end += 1;
    text += end === index ? asEscape(codes[index]!) : `${asEscape(codes[index]!)}-${asEscape(codes[end]!)}`;
    index = end + 1;
  }
  return text;
}

let foldingUnits: number[] | undefined;

/** The UTF-16 units from `from` to `to` that fold to another one (about 1,200 of 65,536). */
function unitsWithOtherFold(from: number, to: number): number[] {
  foldingUnits ??= Array.from({ length: 0x10000 }, (_, code) => code).filter(
    (code) => (code < 0xd800 || code > 0xdfff) && foldUnit(code) !== code,
  );
  const first = lowerBound(foldingUnits, from);
  const last = lowerBound(foldingUnits, to + 1);
  return foldingUnits.slice(first, last);
}

function lowerBound(sorted: number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
