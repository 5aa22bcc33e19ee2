import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseCloudConfig } from "./cloud-init.ts";

const layout = { username: "student", writableRoots: ["/home/student", "/tmp"] };

function parse(userData: string) {
  return parseCloudConfig(userData, layout);
}

describe("parseCloudConfig", () => {
  it("reads write_files with text, base64 and gzip+base64 content, modes and append", () => {
    const gz = gzipSync("zipped\n").toString("base64");
    const config = parse(`#cloud-config
write_files:
  - path: /home/student/plain.txt
    content: |
      hello
  - path: /tmp/secret
    encoding: b64
    content: ${Buffer.from("s3cret").toString("base64")}
    permissions: '0600'
  - path: /home/student/bin/tool
    encoding: gz+b64
    content: ${gz}
    permissions: 0755
    append: true
`);
    expect(config.log).toEqual([]);
    expect(config.writeFiles).toEqual([
      { path: "/home/student/plain.txt", content: Buffer.from("hello\n"), mode: 0o644, append: false },
      { path: "/tmp/secret", content: Buffer.from("s3cret"), mode: 0o600, append: false },
      { path: "/home/student/bin/tool", content: Buffer.from("zipped\n"), mode: 0o755, append: true },
    ]);
  });

  it("skips files outside the home and /tmp, also when .. leads there, and says so", () => {
    const config = parse(`#cloud-config
write_files:
  - path: /etc/motd
    content: hi
  - path: /home/student/../../usr/local/bin/x
    content: hi
  - path: relative.txt
    content: hi
  - path: /tmp/ok
    content: hi
`);
    expect(config.writeFiles.map((file) => file.path)).toEqual(["/tmp/ok"]);
    expect(config.log).toEqual([
      "cloud-init: write_files[0] skipped: /etc/motd is outside /home/student and /tmp, the only writable places in an emulated guest",
      "cloud-init: write_files[1] skipped: /usr/local/bin/x is outside /home/student and /tmp, the only writable places in an emulated guest",
      "cloud-init: write_files[2] skipped: path relative.txt is not absolute",
    ]);
  });

  it("reports bad entries and ignored fields without dropping the good ones", () => {
    const config = parse(`#cloud-config
write_files:
  - path: /tmp/a
    encoding: rot13
    content: x
  - path: /tmp/b
    permissions: rwx
  - path: /tmp/c
    owner: root:root
  - just a string
`);
    expect(config.writeFiles.map((file) => file.path)).toEqual(["/tmp/c"]);
    expect(config.log).toEqual([
      'cloud-init: write_files[0] skipped: /tmp/a: encoding "rot13" is not one of b64, gzip, gz+b64',
      'cloud-init: write_files[1] skipped: /tmp/b: permissions "rwx" is not an octal mode',
      'cloud-init: write_files[2] /tmp/c: owner "root:root" ignored, files belong to student',
      "cloud-init: write_files[3] skipped: an entry must be a mapping",
    ]);
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

  it("notes the modules it does not emulate", () => {
    const config = parse("#cloud-config\nhostname: other\nusers: [default]\nruncmd: ['true']\n");
    expect(config.log).toEqual(["cloud-init: not emulated, ignored: hostname, users"]);
  });

  it("ignores user data that is not #cloud-config or not YAML, with a log line", () => {
    expect(parse("#!/bin/sh\necho hi\n").log).toEqual([
      'cloud-init: user data ignored: only #cloud-config documents are emulated (first line: "#!/bin/sh")',
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
    expect(parseCloudConfig(undefined, layout)).toEqual({ writeFiles: [], runcmd: [], log: [] });
    expect(parse("#cloud-config\n")).toEqual({ writeFiles: [], runcmd: [], log: [] });
  });
});
