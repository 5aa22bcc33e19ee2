import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { emptyCloudConfig, parseCloudConfig } from "./cloud-init.ts";

const parse = parseCloudConfig;

describe("parseCloudConfig", () => {
  it("reads write_files with text, base64 and gzip+base64 content, modes, owners, append and defer", () => {
    const gz = gzipSync("zipped\n").toString("base64");
    const config = parse(`#cloud-config
write_files:
  - path: /home/student/plain.txt
    content: |
      hello
  - path: /etc/lab-agent/key
    encoding: b64
    content: ${Buffer.from("s3cret").toString("base64")}
    permissions: '0600'
  - path: /usr/local/bin/tool
    encoding: gz+b64
    content: ${gz}
    permissions: 0755
    owner: student:student
    append: true
    defer: true
`);
    expect(config.log).toEqual([]);
    const base = { owner: "root:root", append: false, defer: false };
    expect(config.writeFiles).toEqual([
      { ...base, path: "/home/student/plain.txt", content: Buffer.from("hello\n"), mode: 0o644 },
      { ...base, path: "/etc/lab-agent/key", content: Buffer.from("s3cret"), mode: 0o600 },
      {
        path: "/usr/local/bin/tool",
        content: Buffer.from("zipped\n"),
        mode: 0o755,
        owner: "student:student",
        append: true,
        defer: true,
      },
    ]);
  });

  it("takes any absolute path, .. resolved (the guest decides at boot what it may write), and skips relative ones", () => {
    const config = parse(`#cloud-config
write_files:
  - path: /etc/gitconfig
    content: hi
  - path: /home/student/../../usr/local/bin/x
    content: hi
  - path: relative.txt
    content: hi
`);
    expect(config.writeFiles.map((file) => file.path)).toEqual(["/etc/gitconfig", "/usr/local/bin/x"]);
    expect(config.log).toEqual(["cloud-init: write_files[2] skipped: path relative.txt is not absolute"]);
  });

  it("reports bad entries without dropping the good ones", () => {
    const config = parse(`#cloud-config
write_files:
  - path: /tmp/a
    encoding: rot13
    content: x
  - path: /tmp/b
    permissions: rwx
  - path: /tmp/c
    owner: "root; rm -rf /"
  - path: /tmp/d
  - just a string
`);
    expect(config.writeFiles.map((file) => file.path)).toEqual(["/tmp/d"]);
    expect(config.log).toEqual([
      'cloud-init: write_files[0] skipped: /tmp/a: encoding "rot13" is not one of b64, gzip, gz+b64',
      'cloud-init: write_files[1] skipped: /tmp/b: permissions "rwx" is not an octal mode',
      'cloud-init: write_files[2] skipped: /tmp/c: owner "root; rm -rf /" is not "user" or "user:group"',
      "cloud-init: write_files[4] skipped: an entry must be a mapping",
    ]);
  });

  it("reads packages, package_update and package_upgrade (and their apt_ spellings)", () => {
    const config = parse(
      "#cloud-config\npackages: [git, [python3-pip, '23.0'], {bad: 1}]\napt_update: true\npackage_upgrade: true\n",
    );
    expect(config.packages).toEqual(["git", ["python3-pip", "23.0"]]);
    expect(config.packageUpdate).toBe(true);
    expect(config.packageUpgrade).toBe(true);
    expect(config.log).toEqual(["cloud-init: packages[2] skipped: it must be a name or [name, version]"]);
  });

  it("reads bootcmd like runcmd", () => {
    const config = parse("#cloud-config\nbootcmd: [echo early, [touch, /run/x]]\n");
    expect(config.bootcmd).toEqual(["echo early", ["touch", "/run/x"]]);
  });

  it("reads runcmd strings and argv lists, and skips other items", () => {
    const config = parse(`#cloud-config
runcmd:
  - echo one > /tmp/one
  - [touch, "/tmp/with space", 42]
  - {not: a command}
`);
    expect(config.runcmd).toEqual(["echo one > /tmp/one", ["touch", "/tmp/with space", "42"]]);
    expect(config.log).toEqual(["cloud-init: runcmd[2] skipped: it must be a string or a list of strings"]);
  });

  it("notes what it does not emulate for the emulator's log, never the guest's boot", () => {
    const config = parse("#cloud-config\nhostname: other\nusers: [default]\nruncmd: ['true']\n");
    expect(config.log).toEqual([]);
    expect(config.notEmulated).toEqual(["ignored: hostname"]);
  });

  it("takes users naming the guest's own user or default, and notes any other", () => {
    const own = parse("#cloud-config\nusers:\n  - default\n  - name: student\n    shell: /bin/bash\n");
    expect(own.notEmulated).toEqual([]);
    const others = parse("#cloud-config\nusers:\n  - name: student\n  - name: ta\n  - bob\n", "student");
    expect(others.notEmulated).toEqual(["users ignored: ta, bob (a guest here has one user, student)"]);
    const more = parse(
      "#cloud-config\nusers:\n  - name: student\n    sudo: ALL=(ALL) ALL\n    groups: wheel\n  - {}\n",
    );
    expect(more.notEmulated).toEqual([
      "users ignored for student: sudo, groups",
      "users ignored: an entry without a name (a guest here has one user, student)",
    ]);
    expect(others.log).toEqual([]);
  });

  it("ignores user data that is not #cloud-config or not YAML, with a log line", () => {
    expect(parse("#!/bin/sh\necho hi\n").notEmulated).toEqual([
      'user data ignored: only #cloud-config documents are emulated (first line: "#!/bin/sh")',
    ]);
    const broken = parse("#cloud-config\nruncmd: [\n");
    expect(broken.runcmd).toEqual([]);
    expect(broken.log).toHaveLength(1);
    expect(broken.log[0]).toMatch(/^cloud-init: user data is not valid YAML, ignored: /);
    expect(parse("#cloud-config\n- a list\n").log).toEqual([
      "cloud-init: user data ignored: a #cloud-config document must be a mapping",
    ]);
  });

  it("accepts no user data and an empty document", () => {
    expect(parseCloudConfig(undefined)).toEqual(emptyCloudConfig());
    expect(parse("#cloud-config\n")).toEqual(emptyCloudConfig());
  });
});
