// The OpenID Connect end-to-end setup, shared by playwright.config.ts, the provider it starts and
// e2e/oidc.spec.ts: a second console in AUTH_MODE=oidc beside the demo one, and a test provider.
import type { TestAccount, TestClient } from "../../src/server/auth/oidc/testing/test-provider.ts";

const demoPort = Number(process.env.E2E_PORT ?? 18080);
export const oidcConsolePort = demoPort + 1;
export const oidcProviderPort = demoPort + 2;
export const oidcConsoleURL = `http://127.0.0.1:${oidcConsolePort}`;
export const oidcIssuer = `http://127.0.0.1:${oidcProviderPort}`;
export const oidcProviderName = "Test University";

export const oidcClient: TestClient = {
  clientId: "lab-console-e2e",
  clientSecret: "an-e2e-client-secret",
  redirectUri: `${oidcConsoleURL}/api/auth/oidc/callback`,
  postLogoutRedirectUri: `${oidcConsoleURL}/sign-in`,
};

export const oidcAccounts = {
  ines: { username: "ines", password: "ines-password", groups: ["cs101-staff"] },
  tomas: { username: "tomas", password: "tomas-password", groups: ["cs101-tas", "library"] },
  stella: { username: "stella", password: "stella-password", groups: ["cs101"] },
  otto: { username: "otto", password: "otto-password", groups: ["cs202"] },
} satisfies Record<string, TestAccount>;

/** The console's environment in OIDC mode (besides PORT, DATA_DIR and the emulator's timing). */
export const oidcConsoleEnv = {
  AUTH_MODE: "oidc",
  OIDC_ISSUER_URL: oidcIssuer,
  OIDC_CLIENT_ID: oidcClient.clientId,
  OIDC_CLIENT_SECRET: oidcClient.clientSecret,
  PUBLIC_URL: oidcConsoleURL,
  OIDC_SCOPES: "openid profile groups",
  OIDC_ROLE_GROUPS: JSON.stringify({ instructor: ["cs101-staff"], ta: ["cs101-tas"], student: ["cs101"] }),
  OIDC_PROVIDER_NAME: oidcProviderName,
};
