// A multi-line paste into a shell runs every line as a command. Past a few lines, ask first.

export const pasteConfirmLines = 5;

export function lineCount(text: string): number {
  const withoutFinalBreak = text.replace(/\r?\n$/, "");
  return withoutFinalBreak === "" ? 0 : withoutFinalBreak.split(/\r\n|\r|\n/).length;
}

export function pasteNeedsConfirmation(text: string): boolean {
  return lineCount(text) >= pasteConfirmLines;
}
