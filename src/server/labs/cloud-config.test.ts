import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { mergeCloudConfigs, parseCloudConfig, renderCloudConfig } from "./cloud-config.ts";

describe("cloud-config", () => {
  it("joins bootcmd, packages, runcmd, users and write_files in order and lets later parts win elsewhere", () => {
    const merged = mergeCloudConfigs([
      { runcmd: ["one"], packages: ["git"], hostname: "first", users: [{ name: "student" }] },
      { runcmd: ["two"], bootcmd: ["early"], hostname: "second", write_files: [{ path: "/a" }] },
      { runcmd: ["three"], packages: ["vim"], users: [{ name: "grader" }], timezone: "UTC" },
    ]);
    expect(merged).toEqual({
      runcmd: ["one", "two", "three"],
      packages: ["git", "vim"],
      hostname: "second",
      users: [{ name: "student" }, { name: "grader" }],
      bootcmd: ["early"],
      write_files: [{ path: "/a" }],
      timezone: "UTC",
    });
  });

  it("ignores empty keys instead of erasing an earlier part's value", () => {
    const first = parseCloudConfig("#cloud-config\nruncmd: [a]\nhostname: h\n");
    const second = parseCloudConfig("#cloud-config\nruncmd:\nhostname:\n");
    if (!first.ok || !second.ok) throw new Error("both parts are valid");
    expect(mergeCloudConfigs([first.config, second.config])).toEqual({ runcmd: ["a"], hostname: "h" });
  });

  it("renders a #cloud-config that reads back as the same data, long lines unfolded", () => {
    const config = {
      runcmd: [`echo ${"x".repeat(200)}`],
      write_files: [{ path: "/etc/x", content: "a\nb\n" }],
    };
    const text = renderCloudConfig(config);
    expect(text.split("\n")[0]).toBe("#cloud-config");
    expect(text).toContain(`echo ${"x".repeat(200)}\n`);
    expect(parse(text)).toEqual(config);
  });

  it("keeps a __proto__ key as data", () => {
    const part = parseCloudConfig('"__proto__": {x: 1}\n');
    if (!part.ok) throw new Error("valid YAML");
    const merged = mergeCloudConfigs([part.config]);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.keys(merged)).toEqual(["__proto__"]);
  });

  it("reads an empty part as no settings and refuses scripts and non-list list keys with their lines", () => {
    expect(parseCloudConfig("#cloud-config\n")).toEqual({ ok: true, config: {} });
    expect(parseCloudConfig("#!/bin/sh\necho hi\n")).toEqual({
      ok: false,
      problems: [
        { line: 1, message: "must be a #cloud-config mapping (shell scripts are not supported: use runcmd)" },
      ],
    });
    expect(parseCloudConfig("#cloud-config\npackages: [git]\nwrite_files: {path: /x}\n")).toEqual({
      ok: false,
      problems: [{ line: 3, message: "write_files must be a list" }],
    });
  });
});
