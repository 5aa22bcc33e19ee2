import type { Page } from "@playwright/test";
import { translator, type Translate } from "../support/catalog.ts";
import { demoPassword } from "../support/demo-users.ts";

export class SignInPage {
  readonly heading;
  readonly username;
  readonly password;
  readonly submit;

  constructor(
    readonly page: Page,
    readonly t: Translate = translator("en"),
  ) {
    this.heading = page.getByRole("heading", { name: t("auth.signIn.heading") });
    this.username = page.getByLabel(t("auth.signIn.username"), { exact: true });
    this.password = page.getByLabel(t("auth.signIn.password"), { exact: true });
    this.submit = page.getByRole("button", { name: t("auth.signIn.submit") });
  }

  async goto(): Promise<void> {
    await this.page.goto("/sign-in");
  }

  async signIn(username: string, password = demoPassword): Promise<void> {
    await this.username.fill(username);
    await this.password.fill(password);
    await this.submit.click();
  }
}
