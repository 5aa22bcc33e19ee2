import type { Page } from "@playwright/test";
import { demoPassword } from "../support/demo-users.ts";

export class SignInPage {
  readonly heading;
  readonly username;
  readonly password;
  readonly submit;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { name: "Sign in to Lab Console" });
    this.username = page.getByLabel("Username", { exact: true });
    this.password = page.getByLabel("Password", { exact: true });
    this.submit = page.getByRole("button", { name: "Sign in" });
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
