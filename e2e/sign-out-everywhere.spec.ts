import { expect, test } from "./fixtures.ts";
import { SignInPage } from "./pages/sign-in-page.ts";

test("an instructor signs a person out everywhere from the audit page; their open page is signed out", async ({
  browser,
  pageAs,
}) => {
  // Carol signs in through the page in a browser of her own (not the shared fixtures, which sign in again later).
  const carolContext = await browser.newContext();
  const carol = await carolContext.newPage();
  const signIn = new SignInPage(carol);
  await signIn.goto();
  await signIn.signIn("carol");
  await expect(carol.getByRole("navigation", { name: "Main" })).toBeVisible();

  const ivan = await pageAs("ivan");
  await ivan.goto("/admin/audit");
  const form = ivan.getByRole("region", { name: "Sign a person out everywhere" });
  await form.getByLabel("User name").fill("carol");
  await form.getByRole("button", { name: "Sign out everywhere" }).click();
  await expect(form).toContainText("carol is signed out");
  await expect(ivan.locator('tr[data-action="sign-out-user"]').first()).toContainText("carol");

  // Her next request finds her signed out.
  await carol.reload();
  await expect(signIn.heading).toBeVisible();
  await carolContext.close();
});
