// The test OpenID provider as a program, for Playwright's webServer: `node --import tsx e2e/support/oidc-provider.ts`.
import { startTestProvider } from "../../src/server/auth/oidc/testing/test-provider.ts";
import { oidcAccounts, oidcClient, oidcProviderPort } from "./oidc-setup.ts";

const provider = await startTestProvider({
  accounts: Object.values(oidcAccounts),
  client: oidcClient,
  port: oidcProviderPort,
});
console.log(`test OpenID provider: ${provider.issuer}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void provider.close().then(() => process.exit(0));
  });
}
