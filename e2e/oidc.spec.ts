import { expect, test, type Page } from "@playwright/test";
import { oidcAccounts, oidcConsoleURL, oidcIssuer, oidcProviderName } from "./support/oidc-setup.ts";

// The console in AUTH_MODE=oidc (the second webServer), signing in at the test provider's own page.
test.use({ baseURL: oidcConsoleURL });

type Account = (typeof oidcAccounts)[keyof typeof oidcAccounts];

async function signInAtProvider(page: Page, account: Account): Promise<void> {
  await page.getByRole("link", { name: `Sign in with ${oidcProviderName}` }).click();
  await expect(page).toHaveURL(new RegExp(`^${oidcIssuer}/interaction/`));
  await page.getByLabel("Username").fill(account.username);
  await page.getByLabel("Password").fill(account.password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

test("a TA signs in through the provider, gets the TA role, and signs out of both", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/sign-in$/);
  // No password form in this mode: only the provider's button.
  await expect(page.getByLabel("Password")).toHaveCount(0);
  await signInAtProvider(page, oidcAccounts.tomas);

  await expect(page).toHaveURL(`${oidcConsoleURL}/`);
  await expect(page.getByTestId("current-user")).toHaveText("tomas TA");
  const nav = page.getByRole("navigation", { name: "Main" });
  await expect(nav.getByRole("link", { name: "Sessions" })).toBeVisible();
  await expect(nav.getByRole("link", { name: "Audit log" })).toHaveCount(0);

  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("button", { name: "Yes, sign me out" }).click();
  await expect(page).toHaveURL(`${oidcConsoleURL}/sign-in`);
  expect((await page.request.get("/api/me")).status()).toBe(401);
  // The provider forgot the person too: the next sign-in asks for the password again.
  await page.getByRole("link", { name: `Sign in with ${oidcProviderName}` }).click();
  await expect(page.getByLabel("Password")).toBeVisible();
});

test("an instructor lands on the page they asked for, with the instructor's pages", async ({ page }) => {
  await page.goto("/admin/audit");
  await expect(page).toHaveURL(/\/sign-in\?from=%2Fadmin%2Faudit$/);
  await signInAtProvider(page, oidcAccounts.ines);
  await expect(page).toHaveURL(`${oidcConsoleURL}/admin/audit`);
  await expect(page.getByTestId("current-user")).toHaveText("ines Instructor");
  await expect(
    page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" }),
  ).toBeVisible();
});

test("someone outside the course is told so in plain words, and stays signed out", async ({ page }) => {
  await page.goto("/sign-in");
  await signInAtProvider(page, oidcAccounts.otto);
  await expect(page).toHaveURL(`${oidcConsoleURL}/sign-in?error=no-role`);
  await expect(page.getByRole("alert")).toHaveText(
    "Your account is not enrolled in Lab Console. Ask your instructor to add you to the course.",
  );
  expect((await page.request.get("/api/me")).status()).toBe(401);
});
