import type { Locator } from "@playwright/test";
import type { Translate } from "../support/catalog.ts";

// A session's card reads the same on the home page and on the session's own page.

/** A step of the card's start-up timeline: KubeVirt's phase name, or "Setup" for the lab's set-up. */
export function timelineStep(card: Locator, step: string, t: Translate): Locator {
  return card
    .getByRole("list", { name: t("sessions.timeline.label") })
    .getByRole("listitem")
    .and(card.page().locator(`[data-step="${step}"]`));
}

/** Clicks the card's "End session" and confirms in the dialog. */
export async function endSessionOn(card: Locator, t: Translate): Promise<void> {
  await card.getByRole("button", { name: t("sessions.end.button") }).click();
  const dialog = card.page().getByRole("dialog", { name: t("sessions.end.confirmTitle") });
  await dialog.getByRole("button", { name: t("sessions.end.button") }).click();
}
