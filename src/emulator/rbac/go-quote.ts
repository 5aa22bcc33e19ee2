// The API server quotes names in its messages with Go's %q (strconv.Quote). JSON.stringify agrees for
// plain ASCII but not for control characters or non-printable Unicode, and messages must match byte for byte.

const namedEscapes: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
};

// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

export function goQuote(text: string): string {
  let quoted = '"';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    const named = namedEscapes[char];
    if (named !== undefined) quoted += named;
    else if (code < 0x20 || code === 0x7f) quoted += `\\x${hex(code, 2)}`;
    else if (printable.test(char)) quoted += char;
    else if (code < 0x10000) quoted += `\\u${hex(code, 4)}`;
    else quoted += `\\U${hex(code, 8)}`;
  }
  return `${quoted}"`;
}

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, "0");
}
