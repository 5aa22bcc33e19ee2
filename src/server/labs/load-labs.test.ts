import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { LabSummary } from "../../common/api.ts";
import { defaultVmSizes, formatLabProblem, loadLabs, maxLabFileBytes, toLabSummary } from "./load-labs.ts";

const examplesDir = new URL("../../../labs", import.meta.url).pathname;

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function labDir(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), "labs-"));
  made.push(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

function minimalLab(id = "minimal"): string {
  return [
    `id: ${id}`,
    "title: Minimal",
    "vm:",
    "  size: medium",
    "  image: quay.io/containerdisks/fedora:41",
    "",
  ].join("\n");
}

/** Loads one file and returns its problems as "line: message". */
function problemsOf(text: string): string[] {
  const { labs, problems } = loadLabs(labDir({ "lab.yaml": text }), defaultVmSizes);
  expect(labs).toEqual([]);
  return problems.map((problem) => `${problem.line}: ${problem.message}`);
}

describe("loadLabs", () => {
  it("loads the example labs without problems", () => {
    const { labs, problems } = loadLabs(examplesDir, defaultVmSizes);
    expect(problems).toEqual([]);
    expect(labs.map((lab) => lab.id)).toEqual([
      "git-workflow",
      "linux-basics",
      "nested-kvm",
      "screen-basics",
    ]);
    expect(labs.find((lab) => lab.id === "screen-basics")?.session.consoles).toEqual(["serial", "graphical"]);
    const linuxBasics = labs.find((lab) => lab.id === "linux-basics");
    expect(linuxBasics?.vm).toMatchObject({ cpu: 1, memory: "2Gi", nested: false, cloudInit: null });
    expect(linuxBasics?.checks[0]).toEqual({
      id: "hello-file",
      title: "Create ~/hello.txt containing hello",
      points: 2,
      run: "grep -q hello ~/hello.txt",
      timeoutSeconds: 10,
      selfCheck: true,
      hint: "Use echo and a redirect.",
      translations: {
        title: { ja: "内容に hello を含む ~/hello.txt を作成する", zh: "创建内容包含 hello 的 ~/hello.txt" },
        hint: { ja: "echo とリダイレクトを使いましょう。", zh: "使用 echo 和重定向。" },
      },
    });
    // Every example lab reads in all three languages (a hint that is only a command needs no translation).
    for (const lab of labs) {
      for (const language of ["ja", "zh"] as const) {
        expect(lab.translations?.title?.[language], `${lab.id} title ${language}`).toBeTruthy();
        expect(lab.translations?.description?.[language], `${lab.id} description ${language}`).toBeTruthy();
        for (const check of lab.checks) {
          expect(check.translations?.title?.[language], `${lab.id} ${check.id} ${language}`).toBeTruthy();
        }
      }
    }
    expect(labs.find((lab) => lab.id === "nested-kvm")?.vm).toMatchObject({
      cpu: 4,
      memory: "8Gi",
      nested: true,
    });
  });

  it("fills every default", () => {
    const text = `${minimalLab()}checks:\n  - id: one\n    title: One\n    run: "true"\n`;
    const { labs, problems } = loadLabs(labDir({ "minimal.yaml": text }), defaultVmSizes);
    expect(problems).toEqual([]);
    expect(labs).toEqual([
      {
        id: "minimal",
        title: "Minimal",
        description: "",
        vm: {
          cpu: 2,
          memory: "4Gi",
          image: "quay.io/containerdisks/fedora:41",
          nested: false,
          cloudInit: null,
        },
        session: { minutes: 60, extendMinutes: 15, maxExtensions: 2, terminals: 0, consoles: ["serial"] },
        checks: [{ id: "one", title: "One", points: 1, run: "true", timeoutSeconds: 10, selfCheck: false }],
      },
    ]);
  });

  it("takes texts per language beside plain ones: English is the plain text, the others translations", () => {
    const text = [
      minimalLab().replace("title: Minimal\n", "title:\n  en: Minimal\n  ja: 最小のラボ\n  zh: 最小实验\n"),
      "description:",
      "  en: Plain **Markdown**.",
      "  zh: 普通的 **Markdown**。",
      "checks:",
      "  - id: one",
      "    title: One for everyone",
      '    run: "true"',
      "    hint: {en: Try harder., ja: もう少し頑張りましょう。}",
      "",
    ].join("\n");
    const { labs, problems } = loadLabs(labDir({ "lab.yaml": text }), defaultVmSizes);
    expect(problems).toEqual([]);
    expect(labs[0]).toMatchObject({
      title: "Minimal",
      description: "Plain **Markdown**.",
      translations: {
        title: { ja: "最小のラボ", zh: "最小实验" },
        description: { zh: "普通的 **Markdown**。" },
      },
    });
    expect(labs[0]?.checks[0]).toEqual({
      id: "one",
      title: "One for everyone",
      points: 1,
      run: "true",
      timeoutSeconds: 10,
      selfCheck: false,
      hint: "Try harder.",
      translations: { hint: { ja: "もう少し頑張りましょう。" } },
    });
  });

  it("takes cpu and memory instead of a size, and the sizes the server is configured with", () => {
    const explicit = minimalLab().replace("  size: medium\n", "  cpu: 3\n  memory: 1536Mi\n");
    const custom = minimalLab("custom").replace("size: medium", "size: huge");
    const sizes = { ...defaultVmSizes, huge: { cpu: 16, memory: "64Gi" } };
    const { labs, problems } = loadLabs(labDir({ "a.yaml": explicit, "b.yaml": custom }), sizes);
    expect(problems).toEqual([]);
    expect(labs.map((lab) => [lab.vm.cpu, lab.vm.memory])).toEqual([
      [3, "1536Mi"],
      [16, "64Gi"],
    ]);
  });

  // Each case: the file, then the problems as "line: message".
  const badFiles: [string, string, string[]][] = [
    [
      "size and cpu together",
      minimalLab().replace("  size: medium\n", "  size: medium\n  cpu: 2\n"),
      ["4: vm.size: give either size or cpu and memory, not both"],
    ],
    [
      "neither size nor cpu and memory",
      minimalLab().replace("  size: medium\n", "  cpu: 2\n"),
      ["3: vm: give either size or both cpu and memory"],
    ],
    [
      "an unknown size",
      minimalLab().replace("medium", "huge"),
      ['4: vm.size: unknown size "huge" (sizes here: small, medium, large)'],
    ],
    [
      "memory without a binary unit",
      minimalLab().replace("  size: medium\n", "  cpu: 2\n  memory: 4G\n"),
      ["5: vm.memory: must be a whole number of Mi or Gi, like 512Mi or 4Gi"],
    ],
    [
      "too little memory",
      minimalLab().replace("  size: medium\n", "  cpu: 2\n  memory: 64Mi\n"),
      ["5: vm.memory: must be between 128Mi and 256Gi"],
    ],
    [
      "an id with capitals and underscores",
      minimalLab("Linux_Basics"),
      ["1: id: must be lowercase letters, digits and '-', starting with a letter and not ending with '-'"],
    ],
    ["an id over 40 characters", minimalLab("a".repeat(41)), ["1: id: must be at most 40 characters"]],
    ["a misspelt field", `${minimalLab()}sesion:\n  minutes: 30\n`, ["6: sesion: unknown field"]],
    ["a missing title", minimalLab().replace("title: Minimal\n", ""), ["1: title: is required"]],
    [
      "texts per language without English",
      minimalLab().replace("title: Minimal\n", "title:\n  ja: 最小\n"),
      ["2: title: needs en: the English text, which the other languages fall back to"],
    ],
    [
      "an unknown language",
      minimalLab().replace("title: Minimal\n", "title:\n  en: Minimal\n  jp: 最小\n"),
      ["4: title.jp: unknown field"],
    ],
    [
      "an empty translation",
      minimalLab().replace("title: Minimal\n", "title:\n  en: Minimal\n  zh: ''\n"),
      ["4: title.zh: must not be empty"],
    ],
    [
      "a list as a title",
      minimalLab().replace("title: Minimal\n", "title: [a, b]\n"),
      ["2: title: must be text, or one text per language like {en: …, ja: …, zh: …}"],
    ],
    [
      "a missing image",
      minimalLab().replace("  image: quay.io/containerdisks/fedora:41\n", ""),
      ["3: vm.image: is required"],
    ],
    [
      "a short image name",
      minimalLab().replace("quay.io/containerdisks/fedora:41", "fedora:41"),
      ["5: vm.image: must be a full image reference such as quay.io/containerdisks/fedora:41"],
    ],
    [
      "minutes as a string",
      `${minimalLab()}session:\n  minutes: "60"\n`,
      ['7: session.minutes: must be a number, not the text "60"'],
    ],
    [
      "YAML 1.1 booleans",
      minimalLab().replace("  size: medium\n", "  size: medium\n  nested: yes\n"),
      ['5: vm.nested: must be true or false, not the text "yes"'],
    ],
    [
      "duplicate check ids and an unknown check field",
      `${minimalLab()}checks:\n  - id: a\n    title: A\n    run: "true"\n  - id: a\n    title: Again\n    run: "true"\n    hints: no\n`,
      [
        '10: checks[1].id: duplicate check id "a" (checks[0] has it too)',
        "13: checks[1].hints: unknown field",
      ],
    ],
    [
      "a YAML syntax error",
      `${minimalLab()}checks: [\n`,
      ["7: Flow sequence in block collection must be sufficiently indented and end with a ]"],
    ],
    ["a duplicate key", `${minimalLab()}title: Again\n`, ["6: Map keys must be unique"]],
    [
      "two YAML documents",
      `${minimalLab()}---\n${minimalLab()}`,
      ["6: holds more than one YAML document (remove the ---)"],
    ],
    ["an empty file", "# nothing here\n", ["null: the file is empty"]],
    [
      "an empty value",
      minimalLab().replace("size: medium", "size:"),
      ["4: vm.size: must be text (it is empty)"],
    ],
    ["a list instead of a lab", "- id: x\n", ["1: must be a mapping of fields, not a list"]],
    [
      "a cloudInit script",
      minimalLab().replace(
        "  size: medium\n",
        "  size: medium\n  cloudInit: |\n    #!/bin/bash\n    echo hi\n",
      ),
      ["6: vm.cloudInit: must be a #cloud-config mapping (shell scripts are not supported: use runcmd)"],
    ],
    [
      "a cloudInit runcmd that is not a list",
      minimalLab().replace(
        "  size: medium\n",
        "  size: medium\n  cloudInit: |\n    #cloud-config\n    packages: [git]\n    runcmd: echo hi\n",
      ),
      ["8: vm.cloudInit: runcmd must be a list"],
    ],
    [
      "a cloudInit YAML error",
      minimalLab().replace(
        "  size: medium\n",
        "  size: medium\n  cloudInit: |\n    #cloud-config\n    a: 1\n    a: 2\n",
      ),
      ["8: vm.cloudInit: Map keys must be unique"],
    ],
  ];
  it.each(badFiles)("reports %s with its line", (_name, text, expected) => {
    expect(problemsOf(text)).toEqual(expected);
  });

  it("reports every field problem of a file at once", () => {
    const text = "id: Bad\ntitle: ''\nvm:\n  size: tiny\n  image: x\nextra: 1\n";
    expect(problemsOf(text)).toEqual([
      expect.stringMatching(/^1: id: /),
      "2: title: must not be empty",
      expect.stringMatching(/^5: vm.image: /),
      "6: extra: unknown field",
    ]);
  });

  it("loads the good files beside a bad one and names the bad file's path", () => {
    const dir = labDir({ "good.yaml": minimalLab("good"), "bad.yaml": "id: bad\n" });
    const { labs, problems } = loadLabs(dir, defaultVmSizes);
    expect(labs.map((lab) => lab.id)).toEqual(["good"]);
    expect(problems.map(formatLabProblem)).toEqual([
      `${join(dir, "bad.yaml")}:1: title: is required`,
      `${join(dir, "bad.yaml")}:1: vm: is required`,
    ]);
  });

  it("keeps the first file (by name) with an id and reports the second at its id line", () => {
    const dir = labDir({ "b.yaml": `# copy\n${minimalLab("same")}`, "a.yaml": minimalLab("same") });
    const { labs, problems } = loadLabs(dir, defaultVmSizes);
    expect(labs).toHaveLength(1);
    expect(problems).toEqual([
      {
        file: join(dir, "b.yaml"),
        line: 2,
        message: `id: lab id "same" is already used by ${join(dir, "a.yaml")}`,
      },
    ]);
  });

  it("reads only *.yaml files, skips hidden ones and directories, and follows symlinks", () => {
    const dir = labDir({
      "lab.yml": "not: loaded",
      "notes.txt": "not: loaded",
      "lab.yaml~": "not: loaded",
      ".hidden.yaml": "not: loaded",
    });
    mkdirSync(join(dir, "folder.yaml"));
    mkdirSync(join(dir, "..data"));
    writeFileSync(join(dir, "..data", "linked.yaml"), minimalLab("linked"));
    symlinkSync(join("..data", "linked.yaml"), join(dir, "linked.yaml"));
    const { labs, problems } = loadLabs(dir, defaultVmSizes);
    expect(problems).toEqual([]);
    expect(labs.map((lab) => lab.id)).toEqual(["linked"]);
  });

  it("reports a missing or unreadable lab directory instead of throwing", () => {
    const missing = join(tmpdir(), "no-such-lab-dir-4f1b");
    expect(loadLabs(missing, defaultVmSizes)).toEqual({
      labs: [],
      problems: [{ file: missing, line: null, message: "the lab directory does not exist" }],
    });
    const file = join(labDir({ "x.yaml": minimalLab() }), "x.yaml");
    expect(loadLabs(file, defaultVmSizes).problems).toEqual([
      { file, line: null, message: "the lab directory is not a directory" },
    ]);
  });

  it("refuses a file over 256 KiB before parsing it", () => {
    const padding = `description: "${"x".repeat(maxLabFileBytes)}"\n`;
    const { labs, problems } = loadLabs(labDir({ "big.yaml": minimalLab() + padding }), defaultVmSizes);
    expect(labs).toEqual([]);
    expect(problems.map((problem) => problem.message)).toEqual(["is larger than 256 KiB"]);
  });

  it("refuses text that is not UTF-8", () => {
    const bytes = Buffer.concat([Buffer.from(minimalLab()), Buffer.from([0xc3, 0x28])]);
    const { problems } = loadLabs(labDir({ "latin1.yaml": bytes }), defaultVmSizes);
    expect(problems.map((problem) => problem.message)).toEqual(["is not valid UTF-8 text"]);
  });
});

describe("toLabSummary", () => {
  it("shows a lab without its check commands, hints, image or cloud-init", () => {
    const lab = loadLabs(examplesDir, defaultVmSizes).labs.find(
      (candidate) => candidate.id === "git-workflow",
    );
    if (!lab) throw new Error("git-workflow lab missing");
    const summary = toLabSummary(lab);
    expect(z.strictObject(LabSummary.shape).parse(summary)).toEqual(summary);
    expect(summary).toMatchObject({
      id: "git-workflow",
      title: "Git workflow",
      vm: { cpu: 1, memory: "2Gi", nested: false },
      session: { minutes: 45, extendMinutes: 15, maxExtensions: 2, terminals: 0 },
    });
    expect(summary.checks[0]).toEqual({
      id: "identity",
      title: "Set your Git user.name and user.email",
      points: 1,
      selfCheck: true,
      translations: {
        title: { ja: "Git の user.name と user.email を設定する", zh: "设置 Git 的 user.name 和 user.email" },
      },
    });
    expect(summary.translations?.title).toEqual({ ja: "Git のワークフロー", zh: "Git 工作流程" });
    expect(summary.translations?.description?.ja).toMatch(/^自分のリポジトリで/);
    expect(JSON.stringify(summary)).not.toMatch(/git config|quay\.io|cloud-config|hint|あなたの名前/);
  });
});
