import { useMemo } from "react";
import { useLanguage } from "../../../lib/i18n/use-language.ts";
import { languageInfo } from "../../../lib/i18n/languages.ts";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import { parsePlainMarkdown, type Inline } from "../../../lib/plain-markdown.ts";

/**
 * A lab's description as paragraphs, headings and lists; every character goes through React's escaping.
 * Its headings sit one level under the heading of whatever holds it (`headingLevel`): a card's h3, a
 * panel's h2.
 */
export function LabDescription({ source, headingLevel }: { source: LocalText; headingLevel: 3 | 4 }) {
  const Heading = headingLevel === 3 ? "h3" : "h4";
  const { language } = useLanguage();
  const blocks = useMemo(() => parsePlainMarkdown(source.text), [source.text]);
  return (
    <div
      className="lab-description"
      lang={source.lang === language ? undefined : languageInfo[source.lang].tag}
    >
      {blocks.map((block, index) => {
        if (block.kind === "heading") {
          return (
            <Heading key={index} className="lab-description-heading">
              <Inlines inlines={block.inlines} />
            </Heading>
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
    if (inline.kind === "code")
      return (
        <code key={index} translate="no">
          {inline.text}
        </code>
      );
    if (inline.kind === "strong") return <strong key={index}>{inline.text}</strong>;
    return inline.text;
  });
}
