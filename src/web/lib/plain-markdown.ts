// A small, safe subset of Markdown for lab descriptions: paragraphs, headings, bullet and numbered
// lists, `code` and **bold**. It returns data, never HTML, so React escapes every character of it.

export type Inline = { kind: "text" | "code" | "strong"; text: string };
export type Block =
  | { kind: "paragraph"; inlines: Inline[] }
  | { kind: "heading"; inlines: Inline[] }
  | { kind: "list"; ordered: boolean; items: Inline[][] };

const bullet = /^\s*[-*]\s+/;
const numbered = /^\s*\d+[.)]\s+/;
const heading = /^#{1,6}\s+/;

export function parsePlainMarkdown(source: string): Block[] {
  const blocks: Block[] = [];
  const chunks = source.replace(/\r\n?/g, "\n").split(/\n\s*\n/);
  for (const chunk of chunks) {
    const lines = chunk.split("\n").filter((line) => line.trim() !== "");
    if (lines.length === 0) continue;
    let paragraph: string[] = [];
    const flushParagraph = () => {
      if (paragraph.length > 0)
        blocks.push({ kind: "paragraph", inlines: parseInlines(paragraph.join(" ")) });
      paragraph = [];
    };
    for (const line of lines) {
      const listKind = bullet.test(line) ? "bullet" : numbered.test(line) ? "numbered" : null;
      if (heading.test(line)) {
        flushParagraph();
        blocks.push({ kind: "heading", inlines: parseInlines(line.replace(heading, "").trim()) });
      } else if (listKind) {
        flushParagraph();
        const ordered = listKind === "numbered";
        const item = parseInlines(line.replace(ordered ? numbered : bullet, "").trim());
        const last = blocks.at(-1);
        if (last?.kind === "list" && last.ordered === ordered) last.items.push(item);
        else blocks.push({ kind: "list", ordered, items: [item] });
      } else {
        const last = blocks.at(-1);
        // A wrapped line under a list item continues that item.
        if (paragraph.length === 0 && last?.kind === "list" && /^\s+/.test(line)) {
          last.items.at(-1)?.push({ kind: "text", text: ` ${line.trim()}` });
        } else {
          paragraph.push(line.trim());
        }
      }
    }
    flushParagraph();
  }
  return blocks;
}

export function parseInlines(text: string): Inline[] {
  const inlines: Inline[] = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) inlines.push({ kind: "text", text: text.slice(last, match.index) });
    if (match[1] !== undefined) inlines.push({ kind: "code", text: match[1] });
    else if (match[2] !== undefined) inlines.push({ kind: "strong", text: match[2] });
    last = match.index + match[0].length;
  }
  if (last < text.length) inlines.push({ kind: "text", text: text.slice(last) });
  return inlines;
}
