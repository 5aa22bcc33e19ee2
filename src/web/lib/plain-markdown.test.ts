import { describe, expect, it } from "vitest";
import { parseInlines, parsePlainMarkdown } from "./plain-markdown.ts";

describe("parsePlainMarkdown", () => {
  it("splits paragraphs on blank lines and joins wrapped lines", () => {
    expect(parsePlainMarkdown("Set up a web server\non the VM.\n\nThen check it.")).toEqual([
      { kind: "paragraph", inlines: [{ kind: "text", text: "Set up a web server on the VM." }] },
      { kind: "paragraph", inlines: [{ kind: "text", text: "Then check it." }] },
    ]);
  });

  it("reads headings and both kinds of lists, also right under a paragraph", () => {
    const blocks = parsePlainMarkdown(
      "## Goals\nYou will:\n- install nginx\n- open port 80\n1. first\n2. second",
    );
    expect(blocks).toEqual([
      { kind: "heading", inlines: [{ kind: "text", text: "Goals" }] },
      { kind: "paragraph", inlines: [{ kind: "text", text: "You will:" }] },
      {
        kind: "list",
        ordered: false,
        items: [[{ kind: "text", text: "install nginx" }], [{ kind: "text", text: "open port 80" }]],
      },
      {
        kind: "list",
        ordered: true,
        items: [[{ kind: "text", text: "first" }], [{ kind: "text", text: "second" }]],
      },
    ]);
  });

  it("keeps markup characters as text: the result is data, never HTML", () => {
    expect(parsePlainMarkdown("<img src=x onerror=alert(1)>")).toEqual([
      { kind: "paragraph", inlines: [{ kind: "text", text: "<img src=x onerror=alert(1)>" }] },
    ]);
  });
});

describe("parseInlines", () => {
  it("finds code and bold between plain text", () => {
    expect(parseInlines("Run `systemctl status nginx` and **read** it")).toEqual([
      { kind: "text", text: "Run " },
      { kind: "code", text: "systemctl status nginx" },
      { kind: "text", text: " and " },
      { kind: "strong", text: "read" },
      { kind: "text", text: " it" },
    ]);
  });
});
