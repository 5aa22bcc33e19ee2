import { test as base, type Page } from "@playwright/test";
import type { LabSummary } from "../src/common/api.ts";
import { demoUsers, type DemoUser } from "./support/demo-users.ts";
import { LabApi } from "./support/lab-api.ts";

interface Fixtures {
  /** The API signed in as `user`, one request context per user and test. */
  apiAs: (user: DemoUser) => Promise<LabApi>;
  /** A new browser page already signed in as `user` (its cookie comes from an API sign-in). */
  pageAs: (user: DemoUser) => Promise<Page>;
  /** The first lab in the catalog: every test launches it. */
  lab: LabSummary;
  /** Runs around every test: afterwards, ends the students' sessions, whatever the test did. */
  endStudentSessions: void;
}

export const test = base.extend<Fixtures>({
  apiAs: async ({ playwright, baseURL }, use) => {
    const apis = new Map<DemoUser, LabApi>();
    await use(async (user) => {
      const existing = apis.get(user);
      if (existing) return existing;
      const api = new LabApi(await playwright.request.newContext({ baseURL }), user);
      await api.signIn();
      apis.set(user, api);
      return api;
    });
    for (const api of apis.values()) await api.request.dispose();
  },

  pageAs: async ({ browser, apiAs }, use) => {
    const contexts: Awaited<ReturnType<typeof browser.newContext>>[] = [];
    // The server's Content-Security-Policy must not block anything the pages do.
    const blocked: string[] = [];
    await use(async (user) => {
      const api = await apiAs(user);
      const context = await browser.newContext({ storageState: await api.request.storageState() });
      contexts.push(context);
      const page = await context.newPage();
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
      });
      return page;
    });
    for (const context of contexts) await context.close();
    if (blocked.length > 0) throw new Error(`The CSP blocked: ${blocked.join("\n")}`);
  },

  lab: async ({ apiAs }, use) => {
    const [lab] = await (await apiAs("alice")).labs();
    if (!lab) throw new Error("the BFF lists no labs: e2e needs at least one lab in labs/");
    await use(lab);
  },

  // A student may hold only one session per lab and the next test launches the same lab again.
  endStudentSessions: [
    async ({ apiAs }, use) => {
      await use();
      for (const [user, role] of Object.entries(demoUsers) as [DemoUser, string][]) {
        if (role === "student") await (await apiAs(user)).endAllSessions();
      }
    },
    { auto: true },
  ],
});

export { expect } from "@playwright/test";
