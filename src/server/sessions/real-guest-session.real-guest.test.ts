// One session of a lab on a real guest (Debian under QEMU, emulator/guests/qemu), launched through
// the BFF as a student launches one, and used through the product's own routes: the serial console's
// autologin shell, the agent that cloud-init delivers (self-checks, a terminal, files), a pause and
// an unpause of the VMI, and the session's end, which must end QEMU within the grace period. One VM,
// booted once, shared by the tests in order. Prints what it measured. The image is kept in
// .lab/real-guests between runs (the same folder as qemu-guest.real-guest.test.ts).
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csrfHeader } from "../../common/api.ts";
import { GradingRun, SelfCheck } from "../../common/grading-api.ts";
import { jsonRequest } from "../../emulator/testing/raw-request.ts";
import { qemuPidOf, residentMiB } from "../../emulator/guests/qemu/testing/qemu-process.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { aCheck, aGradingLab } from "../grading/testing/grading-fixtures.ts";
import { startTestBff, testNamespace, type TestBff, type TestBrowser } from "../testing/test-bff.ts";

const stateDir = resolve(".lab/real-guests/emulator");
const bootMs = 600_000;
const graceSeconds = 30;

const lab = aGradingLab(
  [
    aCheck({
      id: "hello-file",
      title: "Create ~/hello.txt",
      selfCheck: true,
      run: "test -f ~/hello.txt",
      hint: "touch makes a file.",
    }),
  ],
  {
    vm: { cpu: 2, memory: "1Gi", image: "quay.io/containerdisks/debian:12", nested: false, cloudInit: null },
    session: { minutes: 60, extendMinutes: 15, maxExtensions: 2, terminals: 1 },
  },
);

let emulator: TestEmulator;
let bff: TestBff;
let alice: TestBrowser;
let cookie: string;
let sessionId: string;
let serial: ConsoleTestClient;
let launchedAt = 0;
let agentReady: Promise<void> = Promise.resolve();
const reasonsWhileBooting = new Set<string>();
const measured: Record<string, string> = {};
const since = (start: number) => `${((Date.now() - start) / 1000).toFixed(1)} s`;

function checksPath(): string {
  return `/api/sessions/${sessionId}/checks`;
}

async function selfCheck(): Promise<SelfCheck["result"]> {
  const answer = await alice.post(checksPath());
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return SelfCheck.parse(answer.body).result;
}

let next = 0;
/** Types a command into `client` and gives back what it printed between two markers. */
async function run(client: ConsoleTestClient, command: string, timeoutMs = 120_000): Promise<string> {
  const id = ++next;
  client.type(`echo "<<"'sta''rt-${id}>>'; ${command}; echo "<<"'do''ne-${id}>>'\r`);
  await client.until(() => client.screen().includes(`<<done-${id}>>`), `command ${id}`, timeoutMs);
  const screen = client.screen();
  const start = screen.lastIndexOf(`<<start-${id}>>`) + `<<start-${id}>>`.length;
  return screen.slice(start, screen.lastIndexOf(`<<done-${id}>>`)).trim();
}

/** Starts an instructor's grading run of the lab and waits for it to finish. */
async function gradingRun(instructor: TestBrowser): Promise<GradingRun> {
  const started = await instructor.post(`/api/labs/${lab.id}/grading-runs`);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const runId: string = started.body.id;
  const since = Date.now();
  for (;;) {
    const answer = await instructor.get(`/api/grading-runs/${runId}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    if (answer.body.status !== "running") {
      const finished = GradingRun.parse(answer.body);
      expect(finished.status).toBe("completed");
      return finished;
    }
    if (Date.now() - since > 120_000) throw new Error(`grading run ${runId} still running after 120 s`);
    await sleep(500);
  }
}

async function pauseSubresource(action: "pause" | "unpause"): Promise<void> {
  const answer = await jsonRequest(
    emulator.emulator,
    "PUT",
    `/apis/subresources.kubevirt.io/v1/namespaces/${testNamespace}/virtualmachineinstances/${sessionId}/${action}`,
    {},
  );
  expect(answer.status, answer.text).toBe(200);
}

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "qemu", stateDir, deployRbac: true });
  // Self-checks as often as the test asks: it polls for the agent while the guest boots.
  bff = await startTestBff({ labs: [lab], emulator, gradingLimits: { selfCheckIntervalMs: 1 } });
  alice = await bff.signIn("alice");
  cookie = await signInCookie(bff.url, "alice");
  launchedAt = Date.now();
  const created = await alice.post("/api/sessions", { labId: lab.id });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  sessionId = created.body.id;
  for (;;) {
    const answer = await alice.get(`/api/sessions/${sessionId}`);
    if (answer.body?.status === "running") break;
    if (Date.now() - launchedAt > bootMs)
      throw new Error(`the session never ran: ${JSON.stringify(answer.body)}`);
    await sleep(500);
  }
  measured["launch to session running (image ready)"] = since(launchedAt);
}, 900_000);

afterAll(async () => {
  console.log(
    `real guest through the BFF, measured from the launch:\n${Object.entries(measured)
      .map(([what, value]) => `  ${what}: ${value}`)
      .join("\n")}`,
  );
  serial?.close();
  await bff?.close();
  await emulator?.close();
});

describe("a session on a real guest, through the BFF", () => {
  it("shows the autologin shell on the serial console without a key pressed", async () => {
    // Meanwhile a self-check every few seconds, as an impatient student would: until the agent
    // listens they are not gradable, and say why.
    agentReady = (async () => {
      for (;;) {
        const result = await selfCheck();
        if (result.gradable) {
          measured["launch to the first gradable self-check"] = since(launchedAt);
          return;
        }
        reasonsWhileBooting.add(result.reason ?? "(no reason)");
        await sleep(5000);
      }
    })();
    serial = await ConsoleTestClient.connect(bff.url, sessionId, { cookie });
    await serial.untilLive(bootMs);
    await serial.untilScreenShows("login:", bootMs);
    measured["launch to the first login: prompt"] = since(launchedAt);
    await serial.untilScreenShows(`student@${sessionId}:~$`, bootMs);
    measured["launch to the console's shell prompt"] = since(launchedAt);
    expect(await run(serial, "whoami; pwd")).toBe("student\n/home/student");
  });

  it("has its agent answer before the student's shell exists, and grades honestly", async () => {
    await agentReady;
    console.log(`self-checks while booting said: ${[...reasonsWhileBooting].join(" | ")}`);
    // The shell came after the agent listened (the getty restart is the user data's last command),
    // so a self-check is gradable once the prompt shows.
    const failed = await selfCheck();
    expect(failed, JSON.stringify(failed)).toMatchObject({ gradable: true, score: 0, maxScore: 1 });
    expect(failed.checks[0]).toMatchObject({ passed: false, outcome: { kind: "exit", code: 1 } });

    await run(serial, "touch ~/hello.txt");
    expect(await selfCheck()).toMatchObject({ gradable: true, score: 1, maxScore: 1 });
  });

  it("runs a terminal through the agent, and moves a file in and out of the home", async () => {
    const terminal = await ConsoleTestClient.connect(bff.url, sessionId, { cookie, terminal: 1 });
    try {
      await terminal.untilLive(60_000);
      expect(await run(terminal, "echo ter''minal; id -un")).toBe("terminal\nstudent");
    } finally {
      terminal.close();
    }

    const url = `${bff.url}/api/sessions/${sessionId}/files?path=${encodeURIComponent("upload.txt")}`;
    const uploaded = await fetch(url, {
      method: "PUT",
      headers: { cookie, [csrfHeader.name]: csrfHeader.value, "content-type": "application/octet-stream" },
      body: "from the browser\n",
    });
    expect(uploaded.status, await uploaded.clone().text()).toBe(200);
    expect(await run(serial, "cat ~/upload.txt; stat -c %U ~/upload.txt")).toBe("from the browser\nstudent");
    const downloaded = await fetch(url, { headers: { cookie } });
    expect(downloaded.status).toBe(200);
    expect(await downloaded.text()).toBe("from the browser\n");
  });

  it("pauses and unpauses the VMI, and the guest works on", async () => {
    const pid = qemuPidOf(sessionId);
    expect(pid).toBeDefined();
    measured["QEMU resident memory, booted and used"] = `${residentMiB(pid!)} MiB (guest memory 1 GiB)`;

    await pauseSubresource("pause");
    // A stopped guest's CPUs run nothing: what is typed waits in the line.
    serial.type("echo pau''sed-typing\r");
    await sleep(3000);
    expect(serial.screen()).not.toContain("paused-typing");
    const whilePaused = await selfCheck();
    expect(whilePaused.gradable).toBe(false);

    await pauseSubresource("unpause");
    await serial.untilScreenShows("paused-typing", 60_000);
    expect(await run(serial, "echo al''ive")).toBe("alive");
    // virt-api refuses port-forward until virt-handler's next sync clears the Paused condition.
    const started = Date.now();
    let result = await selfCheck();
    while (!result.gradable && Date.now() - started < 60_000) {
      await sleep(1000);
      result = await selfCheck();
    }
    expect(result).toMatchObject({ gradable: true, score: 1 });
  });

  it("grades the real session honestly in an instructor's grading run", async () => {
    const ivan = await bff.signIn("ivan");
    const passed = await gradingRun(ivan);
    expect(passed.progress).toEqual({ total: 1, done: 1, ungradable: 0 });
    expect(passed.items[0]).toMatchObject({ owner: "alice" });
    expect(passed.items[0]?.result).toMatchObject({ gradable: true, score: 1, maxScore: 1 });

    await run(serial, "rm ~/hello.txt");
    const failed = (await gradingRun(ivan)).items[0]?.result;
    expect(failed, JSON.stringify(failed)).toMatchObject({ gradable: true, score: 0, maxScore: 1 });
    expect(failed?.checks[0]).toMatchObject({ passed: false, outcome: { kind: "exit", code: 1 } });
  });

  it("is not fooled by rc files that fake a check's outcome (C1)", async () => {
    // A line that answers for any shell without a terminal (the agent's check, were it to read
    // them), and a `test` that always passes, in every file a bash might read first.
    const fakes = ["'[ -t 0 ] || { echo score=1; exit 0; }'", "'test() { return 0; }; export -f test'"];
    await run(
      serial,
      `for f in ~/.bash_profile ~/.bashrc ~/.profile; do for l in ${fakes.join(" ")}; do echo "$l" >> $f; done; done`,
    );
    // The fakes work on a shell that reads them, without a terminal: a naive grader would be fooled.
    const naive = await run(serial, "bash -lc 'test -f ~/hello.txt && echo really-there' </dev/null");
    expect(naive).toBe("score=1");
    const faked = await selfCheck();
    expect(faked, JSON.stringify(faked)).toMatchObject({ gradable: true, score: 0 });
    expect(faked.checks[0]).toMatchObject({ passed: false, outcome: { kind: "exit", code: 1 } });
    const ivan = await bff.signIn("ivan");
    expect((await gradingRun(ivan)).items[0]?.result).toMatchObject({ gradable: true, score: 0 });
  });

  it("keeps the agent's port and key out of the student's reach on the real kernel (C1, M1)", async () => {
    const shown = await run(
      serial,
      [
        // A fake agent cannot listen where the BFF asks: the port is privileged, and taken.
        `python3 -c 'import socket; socket.socket().bind(("0.0.0.0", 899))' 2>&1 | tail -1`,
        `python3 -c 'import socket; socket.socket().bind(("0.0.0.0", 8899)); print("high port ok")' 2>&1 | tail -1`,
        "cat /etc/lab-agent/key 2>&1 | head -1",
        "ln -sf /dev/zero /etc/lab-agent/key 2>&1 | head -1",
        "pkill -f lab_agent.py || echo still-running",
        "id -un",
      ].join("; "),
    );
    expect(shown).toContain("PermissionError: [Errno 13] Permission denied");
    // Not a sandbox that refuses every bind: the student's own servers may listen.
    expect(shown).toContain("high port ok");
    expect(shown).toMatch(/cat: \/etc\/lab-agent\/key: Permission denied/);
    expect(shown).toMatch(/ln: .*Permission denied/);
    expect(shown).toContain("still-running");
    // All of it as the student, without root.
    expect(shown).toMatch(/^student$/m);
    // The agent answered on, and honestly once the work is done.
    await run(serial, "touch ~/hello.txt");
    expect(await selfCheck()).toMatchObject({ gradable: true, score: 1, maxScore: 1 });
  });

  it("ends QEMU within the grace period when the session ends", async () => {
    const pid = qemuPidOf(sessionId);
    expect(pid).toBeDefined();
    const ended = Date.now();
    const answer = await alice.delete(`/api/sessions/${sessionId}`);
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    while (qemuPidOf(sessionId) !== undefined && Date.now() - ended < (graceSeconds + 30) * 1000)
      await sleep(250);
    measured["session end to QEMU gone"] = since(ended);
    expect(qemuPidOf(sessionId)).toBeUndefined();
    // Well within the grace period: the guest shut itself down on the ACPI power button rather
    // than being killed when the period ran out.
    expect(Date.now() - ended).toBeLessThan(graceSeconds * 1000);
  });
});
