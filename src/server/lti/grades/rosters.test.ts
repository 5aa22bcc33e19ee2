// Rosters from the test LMS's NRPS over real HTTP: read in the background at an instructor's launch,
// and on request through the routes; paged, with roles and sections; an LMS that fails, a course that
// offers no roster, and one that pages without end.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../../common/testing/patience.ts";
import { roles } from "../testing/test-platform.ts";
import { courseId } from "./course-id.ts";
import { NrpsClient } from "./nrps-client.ts";
import { ServiceTokens } from "./service-token.ts";
import { startGradesHarness, type GradesHarness } from "./testing/grades-harness.ts";
import { launch } from "./testing/test-launches.ts";

let harness: GradesHarness;
const people = [
  {
    sub: "u-alice",
    name: "Alice Liddell",
    email: "Alice@School.example",
    roles: [roles.learner],
    sections: ["Tue 2pm"],
  },
  {
    sub: "u-bob",
    name: "Bob",
    email: "bob@school.example",
    roles: [roles.learner],
    sections: ["Wed 9am", "Tue 2pm"],
  },
  { sub: "u-carol", name: "Carol", email: "carol@school.example", roles: [roles.learner], sections: [] },
  {
    sub: "u-tara",
    name: "Tara",
    email: "tara@school.example",
    roles: [roles.instructor, roles.teachingAssistant],
    sections: ["Wed 9am"],
  },
  { sub: "u-ivan", name: "Ivan", email: "ivan@school.example", roles: [roles.instructor], sections: [] },
];

beforeAll(async () => {
  harness = await startGradesHarness();
  const { lms } = harness;
  lms.addCourse({ id: "cs-101", title: "CS 101" });
  for (const person of people) {
    lms.addUser({ sub: person.sub, name: person.name, email: person.email });
    lms.enrol("cs-101", person.sub, person.roles, person.sections);
  }
  lms.addResourceLink("cs-101", { id: "link-1", title: "Linux basics", custom: { lab: "linux-basics" } });
});
afterEach(() => expect(harness.warnings).toEqual([]));
afterAll(() => harness?.close());

const course = () => courseId(harness.platform.id, "cs-101");
const launchAs = async (sub: string) =>
  harness.grades.recordLaunch(
    await launch(harness.lms, harness.platform, { sub, courseId: "cs-101", resourceLinkId: "link-1" }),
  );

describe("a course's roster", () => {
  it("is read at an instructor's launch, every page of it, with roles, usernames and sections", async () => {
    harness.lms.quirks.nrpsPageSize = 2;
    await launchAs("u-alice");
    // A student's launch reads nothing.
    expect(await harness.repository.roster(course())).toEqual([]);
    await launchAs("u-ivan");
    const roster = await eventually(
      () => harness.repository.roster(course()),
      (members) => members.length > 0,
      { what: "the roster read in the background" },
    );
    expect(roster).toEqual([
      {
        userId: "u-alice",
        username: "alice@school.example",
        name: "Alice Liddell",
        email: "alice@school.example",
        role: "student",
        sections: ["tue-2pm"],
        status: "Active",
      },
      expect.objectContaining({ userId: "u-bob", role: "student", sections: ["wed-9am", "tue-2pm"] }),
      expect.objectContaining({ userId: "u-carol", role: "student", sections: [] }),
      expect.objectContaining({ userId: "u-ivan", username: "ivan@school.example", role: "instructor" }),
      expect.objectContaining({ userId: "u-tara", role: "ta", sections: ["wed-9am"] }),
    ]);
    expect(await harness.grades.sectionsOf(harness.platform.id, "cs-101", "u-bob")).toEqual([
      "wed-9am",
      "tue-2pm",
    ]);
    expect(await harness.grades.sectionsOf(harness.platform.id, "cs-101", "nobody")).toEqual([]);
    expect(await harness.grades.sectionsOf(harness.platform.id, "another-course", "u-bob")).toEqual([]);
  });

  it("is listed and read again on an instructor's request, and audited", async () => {
    const ivan = await harness.browser("ivan");
    const courses = await ivan.get("/api/lti/courses");
    expect(courses.status).toBe(200);
    expect(courses.body.items).toContainEqual({
      id: course(),
      platformId: harness.platform.id,
      platformName: "Test LMS",
      contextId: "cs-101",
      title: "CS 101",
      hasRoster: true,
      rosterSyncedAt: expect.any(String),
      members: 5,
    });

    harness.lms.addUser({ sub: "u-dan", name: "Dan", email: "dan@school.example" });
    harness.lms.enrol("cs-101", "u-dan", [roles.learner], ["Tue 2pm"]);
    const synced = await ivan.post(`/api/lti/courses/${course()}/roster`);
    expect(synced.status, JSON.stringify(synced.body)).toBe(200);
    expect(synced.body.course).toMatchObject({ id: course(), members: 6 });
    expect(synced.body.members.map((member: { userId: string }) => member.userId)).toContain("u-dan");
    const read = await ivan.get(`/api/lti/courses/${course()}/roster`);
    expect(read.body).toEqual(synced.body);
    const [entry] = await harness.auditRepository.list({ action: "lti-roster-sync" }, { limit: 1 });
    expect(entry).toMatchObject({ actor: "ivan", details: { course: course(), members: 6 } });

    const tara = await harness.browser("tara");
    expect((await tara.get("/api/lti/courses")).status).toBe(403);
    expect((await tara.post(`/api/lti/courses/${course()}/roster`)).status).toBe(403);
    expect((await ivan.get(`/api/lti/courses/${"0".repeat(24)}/roster`)).body.error.reason).toBe(
      "lti_course_not_found",
    );
    expect((await ivan.get("/api/lti/courses/not-an-id/roster")).status).toBe(400);
  });

  it("cannot be read from a course that offered none, or when the LMS fails, and the last one stays", async () => {
    const ivan = await harness.browser("ivan");
    const real = await launch(harness.lms, harness.platform, {
      sub: "u-ivan",
      courseId: "cs-101",
      resourceLinkId: "link-1",
    });
    // A course whose launches carried no NRPS claim.
    await harness.grades.recordLaunch({
      ...real,
      context: { id: "no-roster", title: "Quiet course" },
      nrps: undefined,
    });
    const none = await ivan.post(`/api/lti/courses/${courseId(harness.platform.id, "no-roster")}/roster`);
    expect(none.status).toBe(409);
    expect(none.body.error).toMatchObject({ code: "conflict", reason: "lti_no_roster" });
    expect(none.body.error.message).toMatch(/^Quiet course has not offered its roster/);

    // A course the LMS no longer has.
    const goneUrl = new URL(`${harness.lms.url}/courses/gone/memberships`);
    await harness.grades.recordLaunch({
      ...real,
      role: "student",
      context: { id: "gone", title: "Gone" },
      nrps: { membershipsUrl: goneUrl },
    });
    const gone = await ivan.post(`/api/lti/courses/${courseId(harness.platform.id, "gone")}/roster`);
    expect(gone.status).toBe(502);
    expect(gone.body.error).toMatchObject({ code: "lms_error", reason: "lti_lms_failed" });
    expect(gone.body.error.message).toMatch(/refused the course's members \(HTTP 404\): no such course/);
  });

  it("stops at its page limit rather than following an LMS that pages without end", async () => {
    harness.lms.quirks.nrpsPageSize = 1;
    const nrps = new NrpsClient(new ServiceTokens({ signer: harness.toolKeys.signer }), {
      pages: 3,
      members: 100,
      pageBytes: 64 * 1024,
    });
    const url = new URL(`${harness.lms.url}/courses/cs-101/memberships`);
    await expect(nrps.members(harness.platform, url)).rejects.toThrow(/gave more than 3 pages of members/);
    const fewMembers = new NrpsClient(new ServiceTokens({ signer: harness.toolKeys.signer }), {
      pages: 100,
      members: 2,
      pageBytes: 64 * 1024,
    });
    await expect(fewMembers.members(harness.platform, url)).rejects.toThrow(/gave more than 2 members/);
    harness.lms.quirks.nrpsPageSize = null;
  });
});
