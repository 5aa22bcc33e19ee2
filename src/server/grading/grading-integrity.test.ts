// The security review's grading reproductions (C1, M1), replayed against the product: sessions
// launched through the BFF on an emulator whose guests boot the shipped agent the way a real guest
// does (root-owned files, a systemd unit before the student's shell). Each attack is made by the
// student, in their own console, without root; none may change a grade.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SelfCheck } from "../../common/grading-api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, testNamespace, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { aCheck, aGradingLab } from "./testing/grading-fixtures.ts";
import {
  checkTracerLog,
  refusedTracing,
  startCheckTracer,
  traceableCheckRun,
} from "./testing/check-tracing.ts";
import { runInConsole } from "./testing/guest-console.ts";

const lab = aGradingLab([
  aCheck({ id: "hello-file", points: 2, selfCheck: true, run: "grep -q hello ~/hello.txt" }),
  aCheck({ id: "notes-dir", selfCheck: true, run: "test -d ~/notes" }),
  // Long enough for a program of the student's to find the check's shell while it runs.
  aCheck({
    id: "never-done",
    selfCheck: true,
    run: traceableCheckRun("test -e ~/work-that-was-never-done"),
  }),
]);

let emulator: TestEmulator;
let bff: TestBff;
let alice: TestBrowser;
let sessionId: string;

function inConsole(command: string): Promise<string> {
  return runInConsole(
    { kubeConfig: emulator.kubeConfig, namespace: testNamespace, vmiName: sessionId },
    command,
  );
}

async function selfCheck() {
  const answer = await eventually(
    () => alice.post(`/api/sessions/${sessionId}/checks`),
    (each) => each.status === 201,
    { what: "a self-check past the rate limit" },
  );
  return SelfCheck.parse(answer.body).result;
}

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({ labs: [lab], emulator, gradingLimits: { selfCheckIntervalMs: 500 } });
  alice = await bff.signIn("alice");
  const created = await alice.post("/api/sessions", { labId: lab.id });
  expect(created.status).toBe(201);
  sessionId = created.body.id;
  await eventually(
    () => alice.get(`/api/sessions/${sessionId}`),
    (answer) => answer.body?.status === "running",
    { what: "alice's session running" },
  );
}, 60_000);

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

describe("grading a student who tries to cheat", () => {
  it("grades honestly in a guest that, like Fedora 41, has python3 and no node", async () => {
    const shown = await inConsole("command -v node || echo no-node; command -v python3");
    expect(shown).toContain("no-node");
    expect(shown).toContain("/usr/bin/python3");
    expect(await selfCheck()).toMatchObject({ gradable: true, score: 0, maxScore: 4 });
  });

  it("is not fooled by a line in ~/.bash_profile or ~/.bashrc (C1)", async () => {
    await inConsole(
      "for f in ~/.bash_profile ~/.bashrc ~/.profile; do echo '[ -t 0 ] || { echo score=1; exit 0; }' >> $f; done",
    );
    expect(await selfCheck()).toMatchObject({ gradable: true, score: 0 });
  });

  it("keeps the agent's port, files and key out of the student's reach (C1, M1)", async () => {
    const shown = await inConsole(
      [
        // A fake agent cannot listen where the BFF asks: the port is privileged, and taken.
        `python3 -c 'import socket; socket.socket().bind(("0.0.0.0", 899))' 2>&1 | tail -1`,
        "cat /etc/lab-agent/key 2>&1 | head -1",
        "ln -sf /dev/zero /etc/lab-agent/key 2>&1 | head -1",
        "echo planted > /usr/local/lib/lab-agent/lab_agent.pyz 2>&1 | head -1",
        "pkill -f lab_agent.pyz || echo still-running",
        // The first agent's folder, planted in the home: nothing looks there any more.
        "mkdir -p ~/.lab-agent && echo 'print(1)' > ~/.lab-agent/lab-agent.mjs && ln -sf /dev/zero ~/.lab-agent/token",
      ].join("; "),
    );
    expect(shown).toContain("PermissionError: [Errno 13] Permission denied");
    expect(shown).toMatch(/cat: \/etc\/lab-agent\/key: Permission denied/);
    expect(shown).toMatch(/ln: .*Permission denied/);
    expect(shown).toMatch(/lab_agent\.pyz: Permission denied/);
    expect(shown).toContain("still-running");
    await inConsole("echo hello > ~/hello.txt && mkdir -p ~/notes");
    expect(await selfCheck()).toMatchObject({ gradable: true, score: 3 });
  });

  it("keeps the student's own programs out of a running check (no /proc/PID/fd, no ptrace)", async () => {
    await inConsole(startCheckTracer);
    const result = await selfCheck();
    expect(result.checks.find((check) => check.checkId === "never-done")).toMatchObject({
      points: 0,
      outcome: { kind: "exit", code: 1 },
    });
    const attempts = await inConsole(checkTracerLog);
    expect(attempts).toContain(refusedTracing.readDescriptors);
    expect(attempts).toMatch(refusedTracing.writeIntoStdout);
    expect(attempts).toContain(refusedTracing.ptrace);
  });
});
