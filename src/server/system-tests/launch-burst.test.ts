// 300 students press Launch within a second: the BFF's writes to the API go no faster than its bound
// (kube/write-rate.ts), every student gets a session or a refusal that says when to try again, and
// trying again then gets them one. Nothing is created twice. Real emulator, real sockets, the BFF's
// own cluster client; only the password hashes are cheap (testing/many-students.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { createClusterClient } from "../kube/client.ts";
import { KubeRequestCounter } from "../kube/request-counter.ts";
import { WriteRate } from "../kube/write-rate.ts";
import { labelKeys, sessionsSelector } from "../sessions/labels.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { manyStudents } from "../testing/many-students.ts";
import {
  startTestBff,
  testNamespace,
  type Answer,
  type TestBff,
  type TestBrowser,
} from "../testing/test-bff.ts";

const studentCount = 300;
const lab = aLab({
  id: "burst-lab",
  title: "Burst lab",
  vm: { cpu: 1, memory: "1Gi", image: "quay.io/containerdisks/fedora:41", nested: false, cloudInit: null },
});
/** Room for all 300: the refusals under test are the write bound's, not the capacity's. */
const bigNodes = ["node01", "node02", "node03"].map((name) => ({
  name,
  cpu: "64",
  memory: "512Gi",
  pods: 250,
}));

/** The BFF's own write bound, noting when it let each write go (its take() says so). */
class ObservedWriteRate extends WriteRate {
  readonly sentAt: number[] = [];
  override async take(): Promise<number> {
    const at = await super.take();
    this.sentAt.push(at);
    return at;
  }
}

/** Tighter than production's bound (50 a second, bursts of 100), so that 300 launches overflow it. */
const writeLimits = { perSecond: 20, burst: 40 };
const writeRate = new ObservedWriteRate(writeLimits);
let emulator: TestEmulator;
let bff: TestBff;
let students: string[];

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true, cluster: { nodes: bigNodes } });
  const signIns = await manyStudents(studentCount);
  students = signIns.students;
  bff = await startTestBff({
    labs: [lab],
    emulator,
    writeRate,
    authenticator: signIns.authenticator,
    serverLimits: { maxConnectionsPerAddress: 10_000 },
  });
}, 60_000);

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

const writes = () =>
  bff.kubeRequests.total("create") + bff.kubeRequests.total("patch") + bff.kubeRequests.total("delete");

describe("300 launches at once", () => {
  it("gives everyone a session or a refusal saying when to retry, at a bounded write rate, nothing twice", async () => {
    const browsers = new Map<string, TestBrowser>();
    for (let start = 0; start < students.length; start += 50) {
      await Promise.all(
        students.slice(start, start + 50).map(async (name) => browsers.set(name, await bff.signIn(name))),
      );
    }

    const startedAt = performance.now();
    const launch = (name: string) => browsers.get(name)!.post("/api/sessions", { labId: lab.id });
    const first = await Promise.all(students.map(async (name) => [name, await launch(name)] as const));
    const refused = first.filter(([, answer]) => answer.status !== 201);

    for (const [, answer] of refused) expectClearRefusal(answer);
    expect(first.length - refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);

    // Those refused try again when told, as the page does, until everyone has a session.
    let waiting = refused;
    while (waiting.length > 0) {
      const after = Math.max(...waiting.map(([, answer]) => Number(answer.headers.get("retry-after"))));
      await new Promise((resolve) => setTimeout(resolve, after * 1000));
      const again = await Promise.all(waiting.map(async ([name]) => [name, await launch(name)] as const));
      waiting = again.filter(([, answer]) => answer.status !== 201);
      for (const [, answer] of waiting) expectClearRefusal(answer);
    }
    const seconds = (performance.now() - startedAt) / 1000;

    // Nothing twice: one VM per student, no more VMs than launches answered 201.
    const admin = createClusterClient(emulator.kubeConfig, {
      namespace: testNamespace,
      labelSelector: sessionsSelector,
      counter: new KubeRequestCounter(),
    });
    const { items } = await admin.virtualMachines.list();
    const owners = items.map((vm) => vm.metadata.labels?.[labelKeys.ownerId]);
    expect(items).toHaveLength(studentCount);
    expect(new Set(owners).size).toBe(studentCount);

    // The bound held: no second had more writes go out than the bucket's burst plus a second's
    // refill, and every write the client counted went through it.
    const { perSecond, burst } = writeLimits;
    const sent = writeRate.sentAt.filter((at) => at >= startedAt).sort((a, b) => a - b);
    let busiestSecond = 0;
    for (const [index, at] of sent.entries()) {
      busiestSecond = Math.max(busiestSecond, sent.slice(index).filter((later) => later < at + 1000).length);
    }
    expect(busiestSecond).toBeLessThanOrEqual(burst + perSecond);
    expect(writeRate.sentAt.length).toBe(writes());
    console.log(
      `burst: ${studentCount} launches, ${refused.length} told to retry, all launched after ${seconds.toFixed(1)} s; ` +
        `${sent.length} writes, at most ${busiestSecond} in a second`,
    );
  }, 180_000);
});

function expectClearRefusal(answer: Answer): void {
  expect(answer.status).toBe(503);
  expect(answer.body.error).toMatchObject({ code: "unavailable", reason: "launch_busy" });
  const seconds = Number(answer.headers.get("retry-after"));
  expect(seconds).toBeGreaterThan(0);
  expect(answer.body.error.params.seconds).toBe(seconds);
}
