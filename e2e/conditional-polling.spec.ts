import { expect, test } from "./fixtures.ts";
import { HomePage } from "./pages/home-page.ts";

// The SPA fetches with cache mode "no-cache" and the BFF answers with an ETag, so the browser asks
// again with If-None-Match and an unchanged list costs a 304. Only the wire shows it (fetch itself
// sees a 200 from the cache), so this listens with the Chrome DevTools Protocol.
test("an unchanged session list is revalidated with its ETag and answered 304", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const alice = await apiAs("alice");
  await alice.launchRunning(lab.id);

  const page = await pageAs("alice");
  const devtools = await page.context().newCDPSession(page);
  await devtools.send("Network.enable");
  const listRequests = new Set<string>();
  const wire: { ifNoneMatch: string | undefined; status: number }[] = [];
  const requestHeaders = new Map<string, Record<string, string>>();
  devtools.on("Network.requestWillBeSent", (event) => {
    if (new URL(event.request.url).pathname === "/api/sessions") listRequests.add(event.requestId);
  });
  devtools.on("Network.requestWillBeSentExtraInfo", (event) => {
    requestHeaders.set(event.requestId, event.headers as Record<string, string>);
  });
  devtools.on("Network.responseReceivedExtraInfo", (event) => {
    if (!listRequests.has(event.requestId)) return;
    const headers = requestHeaders.get(event.requestId) ?? {};
    wire.push({
      ifNoneMatch: headers["If-None-Match"] ?? headers["if-none-match"],
      status: event.statusCode,
    });
  });

  const home = new HomePage(page);
  await home.goto();
  await expect(home.sessionCard(lab.title)).toHaveAttribute("data-status", "running");
  await page.reload();
  await expect(home.sessionCard(lab.title)).toHaveAttribute("data-status", "running");

  await expect.poll(() => wire.find((entry) => entry.status === 304)?.ifNoneMatch).toMatch(/^(W\/)?"/);
});
