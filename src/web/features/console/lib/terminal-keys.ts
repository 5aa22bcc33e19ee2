// What the key bar types: the keys a phone's keyboard lacks. Arrows depend on the cursor-key mode
// the program in the guest asked for (DECCKM), as a real terminal's would.

export type BarKey = "escape" | "tab" | "up" | "down" | "left" | "right";

const arrowLetters = { up: "A", down: "B", right: "C", left: "D" } as const;

export function sequenceFor(key: BarKey, applicationCursorKeys: boolean): string {
  if (key === "escape") return "\x1b";
  if (key === "tab") return "\t";
  return `${applicationCursorKeys ? "\x1bO" : "\x1b["}${arrowLetters[key]}`;
}

/** The control character for one typed key (Ctrl then "c" is 0x03); anything else unchanged. */
export function withControl(data: string): string {
  if (data.length !== 1) return data;
  if (data === " ") return "\x00";
  if (data === "?") return "\x7f";
  const code = data.toUpperCase().charCodeAt(0);
  // @ A..Z [ \ ] ^ _ map to 0x00..0x1f.
  return code >= 0x40 && code <= 0x5f ? String.fromCharCode(code - 0x40) : data;
}
