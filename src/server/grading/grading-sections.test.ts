// Sections reach grading, over real sockets: tom, a TA of section b, reads only section b's items,
// runs and grades; a run of section a alone does not exist for him; tara, a TA of the whole course,
// and ivan, the instructor, read everything. Only instructors start runs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GradingRun, GradingRunList, LabGrades } from "../../common/grading-api.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { launchRunning, startTestBff, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { aCheck, aGradingLab } from "./testing/grading-fixtures.ts";

const lab = aGradingLab([aCheck({ id: "home", run: "test -d ~" })]);

let emulator: TestEmulator;
let bff: TestBff;
let ivan: TestBrowser;
let tom: TestBrowser;
let tara: TestBrowser;
/** Session ids by owner: alice is in section a, carol in section b. */
const sessions = new Map<string, string>();

async function finished(runId: string): Promise<GradingRun> {
  const answer = await eventually(
    () => ivan.get(`/api/grading-runs/${runId}`),
    (each) => each.body?.status === "completed",
    { what: `run ${runId} to finish` },
  );
  return GradingRun.parse(answer.body);
}

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({ labs: [lab], emulator });
  ivan = await bff.signIn("ivan");
  tom = await bff.signIn("tom");
  tara = await bff.signIn("tara");
  for (const owner of ["alice", "carol"]) {
    sessions.set(owner, await launchRunning(await bff.signIn(owner), lab.id));
  }
}, 60_000);

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

describe("grading, for staff of some sections", () => {
  let wholeClass: string;
  let sectionA: string;

  beforeAll(async () => {
    const started = await ivan.post(`/api/labs/${lab.id}/grading-runs`);
    expect(started.status).toBe(201);
    wholeClass = started.body.id;
    await finished(wholeClass);
    const onlyA = await ivan.post(`/api/labs/${lab.id}/grading-runs`, {
      sessionIds: [sessions.get("alice")],
    });
    expect(onlyA.status).toBe(201);
    sectionA = onlyA.body.id;
    await finished(sectionA);
  }, 60_000);

  it("shows a TA of section b only section b's items of a run, counted over them", async () => {
    const run = GradingRun.parse((await tom.get(`/api/grading-runs/${wholeClass}`)).body);
    expect(run.items.map((item) => [item.owner, item.section])).toEqual([["carol", "b"]]);
    expect(run.progress).toEqual({ total: 1, done: 1, ungradable: 0 });
    const whole = GradingRun.parse((await tara.get(`/api/grading-runs/${wholeClass}`)).body);
    expect(whole.items.map((item) => item.owner).sort()).toEqual(["alice", "carol"]);
    expect(whole.progress.total).toBe(2);
  });

  it("hides a run of section a alone from him: it does not exist for him, nor in his list", async () => {
    const refused = await tom.get(`/api/grading-runs/${sectionA}`);
    expect(refused.status).toBe(404);
    expect(refused.body.error.reason).toBe("run_not_found");
    const list = GradingRunList.parse((await tom.get(`/api/labs/${lab.id}/grading-runs`)).body);
    expect(list.items.map((run) => run.id)).toEqual([wholeClass]);
    const all = GradingRunList.parse((await ivan.get(`/api/labs/${lab.id}/grading-runs`)).body);
    expect(all.items.map((run) => run.id)).toEqual([sectionA, wholeClass]);
  });

  it("exports only his sections' students, as CSV and as JSON", async () => {
    const csv = (await tom.get(`/api/labs/${lab.id}/grades.csv`)).body as string;
    expect(
      csv
        .trim()
        .split("\r\n")
        .slice(1)
        .map((row) => row.split(",")[0]),
    ).toEqual(["carol"]);
    const json = LabGrades.parse((await tom.get(`/api/labs/${lab.id}/grades.json`)).body);
    expect(json.students.map((row) => row.student)).toEqual(["carol"]);
    const everyone = LabGrades.parse((await tara.get(`/api/labs/${lab.id}/grades.json`)).body);
    expect(everyone.students.map((row) => row.student)).toEqual(["alice", "carol"]);
  });

  it("lets him start nothing: runs and re-runs are the instructor's", async () => {
    expect((await tom.post(`/api/labs/${lab.id}/grading-runs`)).status).toBe(403);
    expect((await tom.post(`/api/grading-runs/${wholeClass}/rerun`)).status).toBe(403);
  });
});
