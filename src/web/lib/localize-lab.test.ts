import { describe, expect, it } from "vitest";
import type { LabSummary } from "../../common/api.ts";
import { localizeLab } from "./localize-lab.ts";

function aLab(overrides: Partial<LabSummary> = {}): LabSummary {
  return {
    id: "linux-basics",
    title: "Linux basics",
    description: "Find your way around.",
    vm: { cpu: 1, memory: "2Gi", nested: false },
    session: { minutes: 60, extendMinutes: 15, maxExtensions: 2, terminals: 0, consoles: ["serial"] },
    checks: [{ id: "hello-file", title: "Create ~/hello.txt", points: 2, selfCheck: true }],
    ...overrides,
  };
}

describe("localizeLab", () => {
  it("takes each text in the reader's language where the lab has it", () => {
    const lab = localizeLab(
      aLab({
        translations: { title: { ja: "Linux の基本", zh: "Linux 基础" } },
        checks: [
          {
            id: "hello-file",
            title: "Create ~/hello.txt",
            points: 2,
            selfCheck: true,
            translations: { title: { ja: "~/hello.txt を作成する" } },
          },
        ],
      }),
      "ja",
    );
    expect(lab.title).toEqual({ text: "Linux の基本", lang: "ja" });
    expect(lab.checks[0]?.title).toEqual({ text: "~/hello.txt を作成する", lang: "ja" });
    // No Japanese description: the English one, marked as English.
    expect(lab.description).toEqual({ text: "Find your way around.", lang: "en" });
  });

  it("falls back to the plain text for a language the lab lacks, and in English", () => {
    const lab = aLab({ translations: { title: { ja: "Linux の基本" } } });
    expect(localizeLab(lab, "zh").title).toEqual({ text: "Linux basics", lang: "en" });
    expect(localizeLab(lab, "en").title).toEqual({ text: "Linux basics", lang: "en" });
    expect(localizeLab(aLab(), "ja").checks[0]?.title).toEqual({ text: "Create ~/hello.txt", lang: "en" });
  });
});
