import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { zipApplication } from "./python-zipapp.ts";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "python-zipapp-"));
});

afterEach(() => rm(root, { recursive: true, force: true }));

const entries = [
  { name: "__main__.py", data: Buffer.from("import greeting\nprint(greeting.text)\n") },
  { name: "greeting.py", data: Buffer.from("text = 'h\u00e9llo from the zip'\n") },
];

describe("a Python zip application", () => {
  it("is run by python3 -I, which imports its other modules from it", async () => {
    const app = path.join(root, "app.pyz");
    await writeFile(app, zipApplication(entries));
    expect(execFileSync("python3", ["-I", app], { encoding: "utf8" })).toBe("h\u00e9llo from the zip\n");
  });

  it("holds each file stored, byte for byte, with its checksum and a fixed date, as zipfile reads it", async () => {
    const app = path.join(root, "app.pyz");
    await writeFile(app, zipApplication(entries));
    const script = [
      "import json, sys, zipfile",
      "z = zipfile.ZipFile(sys.argv[1])",
      "assert z.testzip() is None",
      "print(json.dumps([[i.filename, i.compress_type, i.date_time, z.read(i).hex()] for i in z.infolist()]))",
    ].join("\n");
    expect(JSON.parse(execFileSync("python3", ["-c", script, app], { encoding: "utf8" }))).toEqual(
      // The earliest date a zip holds, every time: the same files make the same bytes.
      entries.map(({ name, data }) => [name, 0, [1980, 1, 1, 0, 0, 0], data.toString("hex")]),
    );
  });
});
