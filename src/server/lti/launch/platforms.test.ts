// LTI_PLATFORMS_FILE as an operator writes it: read whole, or refused with every problem named.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readPlatformsFile } from "./platforms.ts";

describe("the platforms file", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "lti-platforms-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const write = async (text: string) => {
    const file = path.join(dir, "lti.yaml");
    await writeFile(file, text);
    return file;
  };

  it("reads a Moodle as docs/lti.md shows it", async () => {
    const file = await write(`
platforms:
  - id: moodle
    name: Moodle at State U
    issuer: https://moodle.example.edu
    clientId: 7x2kL0dPq9AbCdE
    authLoginUrl: https://moodle.example.edu/mod/lti/auth.php
    tokenUrl: https://moodle.example.edu/mod/lti/token.php
    jwksUrl: https://moodle.example.edu/mod/lti/certs.php
    deploymentIds: ["3"]
`);
    expect(await readPlatformsFile(file)).toEqual([
      {
        id: "moodle",
        name: "Moodle at State U",
        issuer: "https://moodle.example.edu",
        clientId: "7x2kL0dPq9AbCdE",
        authLoginUrl: new URL("https://moodle.example.edu/mod/lti/auth.php"),
        tokenUrl: new URL("https://moodle.example.edu/mod/lti/token.php"),
        tokenAudience: undefined,
        jwksUrl: new URL("https://moodle.example.edu/mod/lti/certs.php"),
        deploymentIds: ["3"],
        emailDomains: [],
        status: "active",
        source: "config",
      },
    ]);
  });

  it("names every problem: plain http off loopback, a bad id, no deployment, the same client twice", async () => {
    const entry = (id: string, url: string) => `
  - id: ${id}
    name: LMS
    issuer: https://lms.example.edu
    clientId: c1
    authLoginUrl: ${url}/auth
    tokenUrl: ${url}/token
    jwksUrl: ${url}/jwks
    deploymentIds: ["1"]`;
    const file =
      await write(`platforms:${entry("Bad_Id", "http://lms.example.edu")}${entry("two", "https://lms.example.edu")}
  - id: three
    name: LMS
    issuer: https://three.example.edu
    clientId: c3
    authLoginUrl: https://three.example.edu/a
    tokenUrl: https://three.example.edu/t
    jwksUrl: https://three.example.edu/j
    deploymentIds: []
`);
    const problems = await readPlatformsFile(file).then(
      () => "",
      (error: Error) => error.message,
    );
    expect(problems).toContain("platforms.0.id");
    expect(problems).toContain("platforms.0.authLoginUrl: must use https");
    expect(problems).toContain("platforms.2.deploymentIds");
    expect(problems).toContain("two platforms have the issuer https://lms.example.edu with client id c1");
  });

  it("says which file could not be read", async () => {
    await expect(readPlatformsFile(path.join(dir, "missing.yaml"))).rejects.toThrow(
      /LTI_PLATFORMS_FILE .*missing\.yaml/,
    );
  });
});
