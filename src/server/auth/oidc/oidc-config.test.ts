import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../config.ts";
import { groupsFromClaim, roleForGroups } from "./role-groups.ts";
import { sectionsForGroups } from "./section-groups.ts";

const oidcEnv = {
  AUTH_MODE: "oidc",
  OIDC_ISSUER_URL: "https://login.example.edu/realms/uni",
  OIDC_CLIENT_ID: "lab-console",
  OIDC_CLIENT_SECRET: "secret",
  PUBLIC_URL: "https://labs.example.edu",
  OIDC_ROLE_GROUPS: '{"instructor":["cs101-staff"],"ta":["cs101-tas"]}',
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig({ env, inCluster: false });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected the configuration to be rejected");
}

describe("AUTH_MODE=oidc", () => {
  it("derives the callback and sign-out return from PUBLIC_URL, with documented defaults", () => {
    const config = loadConfig({ env: oidcEnv, inCluster: false });
    expect(config.authMode).toBe("oidc");
    expect(config.oidc).toEqual({
      issuerUrl: new URL("https://login.example.edu/realms/uni"),
      clientId: "lab-console",
      clientSecret: "secret",
      redirectUrl: new URL("https://labs.example.edu/api/auth/oidc/callback"),
      postLogoutRedirectUrl: new URL("https://labs.example.edu/sign-in"),
      scopes: "openid profile",
      usernameClaim: "preferred_username",
      groupsClaim: "groups",
      roleGroups: { instructor: ["cs101-staff"], ta: ["cs101-tas"] },
      sectionGroupPrefix: undefined,
      providerName: "login.example.edu",
    });
  });

  it("reads sections from groups only when told their prefix", () => {
    const config = loadConfig({
      env: { ...oidcEnv, OIDC_SECTION_GROUP_PREFIX: "cs101-section-" },
      inCluster: false,
    });
    expect(config.oidc?.sectionGroupPrefix).toBe("cs101-section-");
  });

  it("takes OIDC_REDIRECT_URL over PUBLIC_URL, and counts as a sign-in mode for a real cluster", () => {
    const config = loadConfig({
      env: {
        ...oidcEnv,
        LAB_KUBECONFIG: "/etc/lab/kubeconfig",
        OIDC_REDIRECT_URL: "https://lab.example.edu/api/auth/oidc/callback",
      },
      inCluster: false,
    });
    expect(config.oidc?.redirectUrl.href).toBe("https://lab.example.edu/api/auth/oidc/callback");
    expect(config.oidc?.postLogoutRedirectUrl.href).toBe("https://lab.example.edu/sign-in");
  });

  it("names every missing or bad setting at once", () => {
    const problems = problemsOf({
      AUTH_MODE: "oidc",
      OIDC_ISSUER_URL: "http://login.example.edu",
      OIDC_SCOPES: "profile email",
      OIDC_ROLE_GROUPS: '{"admin":["root"]}',
      OIDC_SECTION_GROUP_PREFIX: "cs101-section- ",
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^OIDC_ISSUER_URL: must use https/),
        "OIDC_CLIENT_ID: required with AUTH_MODE=oidc",
        "OIDC_CLIENT_SECRET: required with AUTH_MODE=oidc",
        "OIDC_SCOPES: must include openid",
        expect.stringMatching(/^OIDC_ROLE_GROUPS: Unrecognized key: "admin"/),
        "OIDC_SECTION_GROUP_PREFIX: must not start or end with spaces",
      ]),
    );
    expect(problemsOf({ ...oidcEnv, PUBLIC_URL: "" })).toEqual([
      expect.stringMatching(/^OIDC_REDIRECT_URL: required with AUTH_MODE=oidc, or PUBLIC_URL/),
    ]);
    expect(problemsOf({ ...oidcEnv, OIDC_ROLE_GROUPS: '{"student":["everyone"]}' })).toEqual([
      expect.stringMatching(/^OIDC_ROLE_GROUPS: must name the instructor or TA groups/),
    ]);
  });

  it("allows plain http only for a provider and console on loopback", () => {
    const config = loadConfig({
      env: { ...oidcEnv, OIDC_ISSUER_URL: "http://127.0.0.1:9000", PUBLIC_URL: "http://localhost:8080" },
      inCluster: false,
    });
    expect(config.oidc?.issuerUrl.href).toBe("http://127.0.0.1:9000/");
    expect(problemsOf({ ...oidcEnv, PUBLIC_URL: "http://labs.example.edu" })).toEqual([
      expect.stringMatching(/^PUBLIC_URL: must use https/),
    ]);
  });

  it("still insists on an explicit sign-in mode on a real cluster, and reads no OIDC settings for demo", () => {
    expect(problemsOf({ LAB_KUBECONFIG: "/k" })).toEqual([
      expect.stringMatching(/^AUTH_MODE: must be set .*'oidc'/),
    ]);
    expect(
      loadConfig({ env: { AUTH_MODE: "demo", OIDC_CLIENT_ID: "x" }, inCluster: false }).oidc,
    ).toBeUndefined();
  });
});

describe("DATABASE_URL", () => {
  it("selects PostgreSQL, and only with a PostgreSQL URL", () => {
    expect(loadConfig({ env: {}, inCluster: false }).databaseUrl).toBeUndefined();
    const url = "postgres://console:pw@db.example:5432/lab_console";
    expect(loadConfig({ env: { DATABASE_URL: url }, inCluster: false }).databaseUrl).toBe(url);
    const problems = problemsOf({ DATABASE_URL: "mysql://db.example/lab" });
    expect(problems).toEqual([expect.stringMatching(/^DATABASE_URL: must be a PostgreSQL URL/)]);
    expect(problems[0]).not.toContain("mysql");
  });
});

describe("roles from groups", () => {
  const mapping = { instructor: ["staff"], ta: ["tas"] };

  it("gives the most powerful mapped role, and student to everyone else without a student entry", () => {
    expect(roleForGroups(["tas", "staff"], mapping)).toBe("instructor");
    expect(roleForGroups(["tas"], mapping)).toBe("ta");
    expect(roleForGroups(["anyone"], mapping)).toBe("student");
    expect(roleForGroups([], mapping)).toBe("student");
  });

  it("lets only the student groups in as students when the mapping names them", () => {
    const strict = { ...mapping, student: ["cs101"] };
    expect(roleForGroups(["cs101"], strict)).toBe("student");
    expect(roleForGroups(["staff"], strict)).toBe("instructor");
    expect(roleForGroups(["cs102"], strict)).toBeNull();
  });

  it("reads the claim as a list whether the provider sends one group or many", () => {
    expect(groupsFromClaim(["a", "b", 3])).toEqual(["a", "b"]);
    expect(groupsFromClaim("a")).toEqual(["a"]);
    expect(groupsFromClaim(undefined)).toEqual([]);
  });
});

describe("sections from groups", () => {
  const prefix = "cs101-section-";

  it("takes each group with the prefix as a section, in the claim's order, once each", () => {
    expect(
      sectionsForGroups(
        ["cs101", "cs101-section-b", "cs101-tas", "cs101-section-a", "cs101-section-b"],
        prefix,
      ),
    ).toEqual(["b", "a"]);
    expect(sectionsForGroups(["cs101", "cs101-tas"], prefix)).toEqual([]);
  });

  it("ignores groups whose rest is no section name, and everything without a prefix", () => {
    expect(
      sectionsForGroups(
        [
          "cs101-section-",
          "cs101-section-A",
          "cs101-section-a b",
          `cs101-section-${"x".repeat(64)}`,
          "cs101-section-a",
        ],
        prefix,
      ),
    ).toEqual(["a"]);
    expect(sectionsForGroups(["cs101-section-a"], undefined)).toEqual([]);
  });
});
