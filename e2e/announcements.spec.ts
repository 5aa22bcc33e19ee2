import { expect, test } from "./fixtures.ts";
import { AnnouncementBanners, AnnouncementForm } from "./pages/announcements.ts";
import { WallPage } from "./pages/wall-page.ts";
import { expectAccessible } from "./support/accessibility.ts";

test("a TA sends an announcement from the class wall that the students see until they dismiss it", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  // alice is in section a, carol in b (the demo users file); tara is a TA of the whole course.
  const [aliceApi, carolApi] = await Promise.all([apiAs("alice"), apiAs("carol")]);
  const [aliceSession, carolSession] = await Promise.all([
    aliceApi.launchRunning(lab.id),
    carolApi.launchRunning(lab.id),
  ]);
  const alicePage = await pageAs("alice");
  const carolPage = await pageAs("carol");
  await alicePage.goto(`/sessions/${encodeURIComponent(aliceSession.id)}`);
  await carolPage.goto(`/sessions/${encodeURIComponent(carolSession.id)}`);
  const alice = new AnnouncementBanners(alicePage);
  const carol = new AnnouncementBanners(carolPage);

  const wall = new WallPage(await pageAs("tara"));
  await wall.goto(lab.id);
  await expect(wall.tiles).toHaveCount(2);
  const form = new AnnouncementForm(wall.page);
  const words = "The proxy is down:\nwait five minutes.";
  await form.send(words, "The whole lab");
  await expect(wall.page.getByText("Sent to the students.")).toBeVisible();
  await expect(form.sent.first()).toContainText("tara to the whole lab");

  // Within a poll, on both session pages, exactly as written (line break and all).
  await expect(alice.withText("The proxy is down")).toBeVisible();
  await expect(carol.withText("The proxy is down")).toBeVisible();
  expect(await alice.withText("The proxy is down").locator("[dir=auto]").innerText()).toBe(words);
  await expect(alice.withText("The proxy is down")).toContainText("From tara");
  await expectAccessible(alicePage, "session page with an announcement");

  // It stays through a reload, until dismissed; dismissing is alice's alone.
  await alicePage.reload();
  await expect(alice.withText("The proxy is down")).toBeVisible();
  await alice.dismiss("The proxy is down");
  await expect(alice.all).toHaveCount(0);
  await alicePage.reload();
  await expect(alicePage.getByRole("heading", { name: "Session" })).toBeVisible();
  await expect(alice.all).toHaveCount(0);
  await expect(carol.withText("The proxy is down")).toBeVisible();

  // To one section: carol's, not alice's.
  await form.send("Section b: move to room 204", "Section b");
  const alicePolled = alicePage.waitForResponse((response) => response.url().endsWith("/announcements"));
  await expect(carol.withText("room 204")).toBeVisible();
  await expect(form.sent.first()).toContainText("tara to section b");
  // Alice's page asked again since carol's got it, and still shows nothing.
  await alicePolled;
  await expect(alice.all).toHaveCount(0);
});
