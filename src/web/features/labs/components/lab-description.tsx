import { useMemo } from "react";
import { parsePlainMarkdown, type Inline } from "../../../lib/plain-markdown.ts";

/** A lab's description as paragraphs, headings and lists; every character goes through React's escaping. */
export function LabDescription({ source }: { source: string }) {
  const blocks = useMemo(() => parsePlainMarkdown(source), [source]);
  return (
    <div className="lab-description">
      {blocks.map((block, index) => {
        if (block.kind === "heading") {
          return (
            <h4 key={index} className="lab-description-heading">
              <Inlines inlines={block.inlines} />
            </h4>
          );
        }
        if (block.kind === "list") {
          const List = block.ordered ? "ol" : "ul";
          return (
            <List key={index}>
              {block.items.map((item, itemIndex) => (
                <li key={itemIndex}>
                  <Inlines inlines={item} />
                </li>
              ))}
            </List>
          );
        }
        return (
          <p key={index}>
            <Inlines inlines={block.inlines} />
          </p>
        );
      })}
    </div>
  );
}

function Inlines({ inlines }: { inlines: Inline[] }) {
  return inlines.map((inline, index) => {
    if (inline.kind === "code") return <code key={index}>{inline.text}</code>;
    if (inline.kind === "strong") return <strong key={index}>{inline.text}</strong>;
    return inline.text;
  });
}
