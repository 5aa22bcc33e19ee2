import AxeBuilder from "@axe-core/playwright";
import { expect, type Page } from "@playwright/test";
import { englishOnlyWords, pageLang, type Language } from "./catalog.ts";

// WCAG 2.1 A and AA: the level the console promises on every page.
const wcagTags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

/**
 * Runs axe on the page as it is now, in the light theme and again in the dark one (contrast is the
 * only rule the theme changes), and fails with every violation listed.
 */
export async function expectAccessible(page: Page, state: string): Promise<void> {
  await page.emulateMedia({ colorScheme: "light" });
  const light = await new AxeBuilder({ page }).withTags(wcagTags).analyze();
  await page.emulateMedia({ colorScheme: "dark" });
  const dark = await new AxeBuilder({ page }).withTags(wcagTags).withRules(["color-contrast"]).analyze();
  await page.emulateMedia({ colorScheme: "light" });
  const describe = (theme: string, violations: typeof light.violations) =>
    violations.map(
      (violation) =>
        `${theme}: ${violation.id} (${violation.impact}): ${violation.help}\n` +
        violation.nodes
          .map((node) => `    ${node.target.join(" ")}: ${node.failureSummary ?? ""}`)
          .join("\n"),
    );
  expect([...describe("light", light.violations), ...describe("dark", dark.violations)], state).toEqual([]);
}

/**
 * No English UI text on a page in another language. Reads every text and spoken attribute the page
 * shows, leaving out what is marked as not to translate (usernames, ids, code) or as being in another
 * language (a lab without a translation, the server's English words), and the terminal's own screen.
 */
export async function expectNoUntranslatedText(page: Page, language: Exclude<Language, "en">): Promise<void> {
  await expect(page.locator("html")).toHaveAttribute("lang", pageLang(language));
  const texts = await page.evaluate(() => {
    const skipped = (element: Element | null): boolean => {
      if (!element || element.closest('[translate="no"], script, style, .xterm')) return true;
      const marked = element.closest("[lang]");
      return (
        marked !== document.documentElement && marked?.getAttribute("lang") !== document.documentElement.lang
      );
    };
    const found = [document.title];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!skipped(node.parentElement) && node.textContent?.trim()) found.push(node.textContent.trim());
    }
    for (const element of document.body.querySelectorAll("[aria-label], [title], [placeholder], [alt]")) {
      if (skipped(element)) continue;
      for (const name of ["aria-label", "title", "placeholder", "alt"]) {
        const value = element.getAttribute(name);
        if (value) found.push(value);
      }
    }
    return found;
  });
  const english = englishOnlyWords(language);
  const untranslated = texts.filter((text) =>
    (text.match(/[A-Za-z]{2,}/g) ?? []).some((word) => english.has(word.toLowerCase())),
  );
  expect(untranslated, `English UI text on a ${language} page`).toEqual([]);
}
