import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { findUntranslated } from "./testing/find-untranslated.ts";

const webDir = new URL("../..", import.meta.url).pathname;

function componentFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return componentFiles(path);
    return entry.name.endsWith(".tsx") && !entry.name.endsWith(".test.tsx") ? [path] : [];
  });
}

describe("UI text", () => {
  it("comes from the catalogs in every component", () => {
    const findings = componentFiles(webDir).flatMap((path) =>
      findUntranslated(path, readFileSync(path, "utf8")).map(
        (finding) => `${relative(webDir, path)}:${finding.line}: ${JSON.stringify(finding.text)}`,
      ),
    );
    expect(findings).toEqual([]);
  });

  it("is found as JSX text, in text attributes and in the branches that reach the page", () => {
    const source = `
      export function Example({ busy, name }: { busy: boolean; name?: string }) {
        return (
          <section aria-label="Results" className="panel" data-state="open">
            <h2>Welcome back</h2>
            <p>{busy ? "Saving…" : t("common.done")}</p>
            <Loading label={\`Loading \${name}\`} />
            <input placeholder={name ?? "Your name"} type="text" />
            <p>{name && "hello"}{" · "}{t("a.key", { lab: "x" })}{format.time("12:00")}</p>
          </section>
        );
      }`;
    expect(findUntranslated("example.tsx", source).map((finding) => finding.text)).toEqual([
      "Results",
      "Welcome back",
      "Saving…",
      "Loading",
      "Your name",
      "hello",
    ]);
  });
});
