import { expect, test } from "./fixtures.ts";
import { HomePage } from "./pages/home-page.ts";
import { SignInPage } from "./pages/sign-in-page.ts";

test("a student signs in, launches a lab, sees it reach Running and ends it", async ({ page, lab }) => {
  const signIn = new SignInPage(page);
  await signIn.goto();
  await signIn.signIn("alice");

  const home = new HomePage(page);
  await expect(home.heading).toBeVisible();
  await expect(home.currentUser).toHaveText(/alice\s*Student/);
  await expect(home.mySessions).toContainText("No sessions yet");

  await home.launchButton(lab.title).click();
  const card = home.sessionCard(lab.title);
  await expect(card).toBeVisible();
  await expect(home.timelineStep(card, "Running")).toHaveAttribute("data-state", "done");
  await expect(card).toHaveAttribute("data-status", "running");
  for (const step of ["Pending", "Scheduling", "Scheduled"]) {
    await expect(home.timelineStep(card, step)).toHaveAttribute("data-state", "done");
  }
  await expect(card).toContainText("Time left");

  await home.endSession(lab.title);
  await expect(page.getByRole("dialog")).toBeHidden();
  await expect(card).toBeHidden();
  await expect(home.launchButton(lab.title)).toBeEnabled();

  await home.signOut.click();
  await expect(signIn.heading).toBeVisible();
  await page.goto("/");
  await expect(signIn.heading).toBeVisible();
});
