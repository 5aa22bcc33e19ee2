// Announcements end to end: staff send over real HTTP, students' sessions in the emulator read them
// on their next poll. The demo users: alice and bob in section a, carol in b; tara a TA of the whole
// course, tom a TA of section b, ivan the instructor.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { announcementMaxLength } from "../../common/announcements-api.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { launchRunning, startTestBff, type TestBff, type TestBrowser } from "../testing/test-bff.ts";

const lab = aLab({ id: "linux-basics", title: "Linux basics" });
const otherLab = aLab({ id: "git-workflow", title: "Git workflow" });

/** Added to the BFF's clock: a test sends "hours ago" by moving it back for a moment. */
let offsetMs = 0;
let bff: TestBff;
let alice: TestBrowser;
let bob: TestBrowser;
let carol: TestBrowser;
let tara: TestBrowser;
let tom: TestBrowser;
let ivan: TestBrowser;
const sessionOf: Record<string, string> = {};

beforeAll(async () => {
  bff = await startTestBff({ labs: [lab, otherLab], now: () => new Date(Date.now() + offsetMs) });
  [alice, bob, carol, tara, tom, ivan] = await Promise.all([
    bff.signIn("alice"),
    bff.signIn("bob"),
    bff.signIn("carol"),
    bff.signIn("tara"),
    bff.signIn("tom"),
    bff.signIn("ivan"),
  ]);
  [sessionOf.alice, sessionOf.carol, sessionOf.bob] = await Promise.all([
    launchRunning(alice, lab.id),
    launchRunning(carol, lab.id),
    launchRunning(bob, otherLab.id),
  ]);
}, 60_000);

afterAll(async () => {
  await bff?.close();
});

const announce = (browser: TestBrowser, body: unknown, labId = lab.id) =>
  browser.post(`/api/labs/${labId}/announcements`, body);

async function shown(browser: TestBrowser, student: string): Promise<string[]> {
  const answer = await browser.get(`/api/sessions/${sessionOf[student]}/announcements`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.items.map((item: { text: string }) => item.text);
}

describe("announcements", () => {
  it("reach every student of the lab on their next poll, and no other lab's", async () => {
    const sent = await announce(tara, { text: "The proxy is down: wait five minutes." });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    expect(sent.body).toMatchObject({
      labId: lab.id,
      section: null,
      classId: null,
      author: "tara",
      text: "The proxy is down: wait five minutes.",
    });
    expect(await shown(alice, "alice")).toEqual(["The proxy is down: wait five minutes."]);
    expect(await shown(carol, "carol")).toEqual(["The proxy is down: wait five minutes."]);
    expect(await shown(bob, "bob")).toEqual([]);

    // An unchanged poll costs a 304.
    const first = await alice.get(`/api/sessions/${sessionOf.alice}/announcements`);
    const again = await alice.get(`/api/sessions/${sessionOf.alice}/announcements`, {
      "if-none-match": first.headers.get("etag") ?? "",
    });
    expect(again.status).toBe(304);
  });

  it("keep the text exactly as written, in any language", async () => {
    const text = "  プロキシが止まっています。\n<b>五分</b> 待ってください 🙏  ";
    expect((await announce(ivan, { text })).status).toBe(201);
    expect((await shown(alice, "alice"))[0]).toBe(text);
  });

  it("go away for the student who dismissed one, and for them alone", async () => {
    const sent = await announce(tara, { text: "Dismiss me" });
    const id = sent.body.id as string;
    const dismiss = (browser: TestBrowser, student: string, which = id) =>
      browser.post(`/api/sessions/${sessionOf[student]}/announcements/${which}/dismiss`);

    expect((await dismiss(alice, "alice")).status).toBe(204);
    expect(await shown(alice, "alice")).not.toContain("Dismiss me");
    expect(await shown(carol, "carol")).toContain("Dismiss me");
    // Again changes nothing; staff cannot dismiss for a student; one never sent does not exist.
    expect((await dismiss(alice, "alice")).status).toBe(204);
    expect((await dismiss(tara, "alice")).status).toBe(403);
    const unknown = await dismiss(alice, "alice", "0123456789abcdef0123");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.reason).toBe("announcement_not_found");
    expect((await dismiss(bob, "bob")).status).toBe(404);
    // The staff list still has it.
    const list = await tara.get(`/api/labs/${lab.id}/announcements`);
    expect(list.body.items.map((item: { id: string }) => item.id)).toContain(id);
  });

  it("to a section reach only that section's students", async () => {
    const sent = await announce(tom, { text: "Section b: room 204 now", section: "b" });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    expect(sent.body).toMatchObject({ section: "b", author: "tom" });
    expect((await announce(ivan, { text: "Section a: stay", section: "a" })).status).toBe(201);
    expect(await shown(carol, "carol")).toContain("Section b: room 204 now");
    expect(await shown(carol, "carol")).not.toContain("Section a: stay");
    expect(await shown(alice, "alice")).toContain("Section a: stay");
    expect(await shown(alice, "alice")).not.toContain("Section b: room 204 now");
    // A section announcement is not alice's to dismiss either.
    expect(
      (await alice.post(`/api/sessions/${sessionOf.alice}/announcements/${sent.body.id}/dismiss`)).status,
    ).toBe(404);
  });

  it("from a TA with sections go only to those sections, and their list shows what reaches them", async () => {
    const wholeLab = await announce(tom, { text: "Everyone!" });
    expect(wholeLab.status).toBe(403);
    expect(wholeLab.body.error).toMatchObject({ code: "forbidden", reason: "announce_own_sections" });
    const otherSection = await announce(tom, { text: "Section a!", section: "a" });
    expect(otherSection.status).toBe(403);
    expect(otherSection.body.error.reason).toBe("announce_own_sections");

    const sectionsOf = async (browser: TestBrowser) =>
      new Set(
        (await browser.get(`/api/labs/${lab.id}/announcements`)).body.items.map(
          (item: { section: string | null }) => item.section,
        ),
      );
    expect(await sectionsOf(tom)).toEqual(new Set([null, "b"]));
    expect(await sectionsOf(tara)).toEqual(new Set([null, "a", "b"]));
    expect((await alice.get(`/api/labs/${lab.id}/announcements`)).status).toBe(403);
  });

  it("are audited with their lab, section, class and text", async () => {
    const sent = await announce(ivan, { text: "Audited words", section: "a" });
    const audit = await ivan.get("/api/audit?action=announcement-send");
    expect(audit.body.items[0]).toMatchObject({
      actor: "ivan",
      actorRole: "instructor",
      labId: lab.id,
      details: { announcement: sent.body.id, section: "a", class: null, text: "Audited words" },
    });
  });

  it("sent during a scheduled class of the lab are kept with that class", async () => {
    const now = Date.now();
    const scheduled = await ivan.post("/api/classes", {
      labId: lab.id,
      startsAt: new Date(now - 60_000).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
      expected: 1,
    });
    expect(scheduled.status).toBe(201);
    // Another lab's class running at the same time is not this lab's.
    const elsewhere = await ivan.post("/api/classes", {
      labId: otherLab.id,
      startsAt: new Date(now - 120_000).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
      expected: 1,
    });
    try {
      const sent = await announce(tara, { text: "During the class" });
      expect(sent.body.classId).toBe(scheduled.body.id);
      const elsewhereSent = await announce(tara, { text: "Git, during its class" }, otherLab.id);
      expect(elsewhereSent.body.classId).toBe(elsewhere.body.id);
      const audit = await ivan.get("/api/audit?action=announcement-send");
      expect(audit.body.items[1].details.class).toBe(scheduled.body.id);
    } finally {
      await ivan.delete(`/api/classes/${scheduled.body.id}`);
      await ivan.delete(`/api/classes/${elsewhere.body.id}`);
    }
  });

  it("refuse a text that is empty, only blanks or too long, and a lab that does not exist", async () => {
    for (const text of ["", "   \n ", "x".repeat(announcementMaxLength + 1)]) {
      const refused = await announce(ivan, { text });
      expect(refused.status, JSON.stringify(text)).toBe(400);
      expect(refused.body.error.code).toBe("invalid");
    }
    expect((await announce(ivan, { text: "x".repeat(announcementMaxLength) })).status).toBe(201);
    expect((await announce(ivan, { text: "hi", section: "Not A Section!" })).status).toBe(400);
    const unknown = await announce(tara, { text: "hi" }, "no-such-lab");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.reason).toBe("lab_not_found");
  });

  it("reach a session started later when sent in the 12 hours before it", async () => {
    // Both "sent" before alice's session started: one 11 hours before now, one 13.
    offsetMs = -11 * 3_600_000;
    await announce(tara, { text: "Eleven hours ago" });
    offsetMs = -13 * 3_600_000;
    await announce(tara, { text: "Thirteen hours ago" });
    offsetMs = 0;
    const texts = await shown(alice, "alice");
    expect(texts).toContain("Eleven hours ago");
    expect(texts).not.toContain("Thirteen hours ago");
  });
});
