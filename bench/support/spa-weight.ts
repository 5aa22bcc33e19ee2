// The JavaScript a browser downloads to sign in and see the signed-in home page: every script
// response from loading the sign-in page until the home page has settled, lazy chunks included, in
// raw bytes and in bytes after gzip -9 (what a compressing proxy would send, whatever the BFF does).
import { gzipSync } from "node:zlib";
import { chromium, type Page, type Request, type Response } from "@playwright/test";
import en from "../../src/web/locales/en.json" with { type: "json" };

export interface SpaWeightOptions {
  baseUrl: string;
  username: string;
  password: string;
  chromiumPath?: string;
}

export interface ScriptFile {
  url: string;
  bytes: number;
  gzipBytes: number;
}

export interface SpaWeight {
  requests: number;
  bytes: number;
  gzipBytes: number;
  files: ScriptFile[];
}

// Settled: no request in flight for this long. The home page polls its sessions every 9 s or more.
const quietMs = 500;
const settleTimeoutMs = 30_000;

export async function measureSpaWeight(options: SpaWeightOptions): Promise<SpaWeight> {
  const browser = await chromium.launch({ executablePath: options.chromiumPath ?? "/usr/bin/chromium" });
  try {
    // English, so the headings and labels are the English catalog's (and no other catalog loads).
    const context = await browser.newContext({ locale: "en-US" });
    const page = await context.newPage();
    const network = trackNetwork(page);
    const scripts: Promise<ScriptFile | null>[] = [];
    page.on("response", (response) => {
      if (isScript(response)) scripts.push(measureScript(response));
    });

    await page.goto(options.baseUrl);
    await page.getByLabel(en.auth.signIn.username, { exact: true }).fill(options.username);
    await page.getByLabel(en.auth.signIn.password, { exact: true }).fill(options.password);
    await page.getByRole("button", { name: en.auth.signIn.submit }).click();
    await page
      .getByRole("heading", { name: en.home.title, level: 1 })
      .waitFor({ state: "visible", timeout: settleTimeoutMs });
    await network.quiet();

    const files = (await Promise.all(scripts)).filter((file): file is ScriptFile => file !== null);
    return {
      requests: files.length,
      bytes: sum(files.map((file) => file.bytes)),
      gzipBytes: sum(files.map((file) => file.gzipBytes)),
      files,
    };
  } finally {
    await browser.close();
  }
}

function isScript(response: Response): boolean {
  const contentType = response.headers()["content-type"] ?? "";
  return contentType.includes("javascript") || new URL(response.url()).pathname.endsWith(".js");
}

async function measureScript(response: Response): Promise<ScriptFile | null> {
  // A redirect or a failed request has no script body: nothing was downloaded to run.
  if (!response.ok()) return null;
  const body = await response.body();
  return { url: response.url(), bytes: body.length, gzipBytes: gzipSync(body, { level: 9 }).length };
}

/**
 * Follows the page's requests from now on. Playwright's "networkidle" load state belongs to the
 * document, and the sign-in page's document reached it before the home page rendered.
 */
function trackNetwork(page: Page): { quiet(): Promise<void> } {
  const inFlight = new Set<Request>();
  let lastActivity = Date.now();
  page.on("request", (request) => {
    inFlight.add(request);
    lastActivity = Date.now();
  });
  const ended = (request: Request) => {
    inFlight.delete(request);
    lastActivity = Date.now();
  };
  page.on("requestfinished", ended);
  page.on("requestfailed", ended);
  return {
    async quiet() {
      const deadline = Date.now() + settleTimeoutMs;
      while (inFlight.size > 0 || Date.now() - lastActivity < quietMs) {
        if (Date.now() > deadline) throw new Error(`the page did not settle within ${settleTimeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
