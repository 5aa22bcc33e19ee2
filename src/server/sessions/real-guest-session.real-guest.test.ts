// One session of a lab on a real guest (Debian under QEMU, emulator/guests/qemu), launched through
// the BFF as a student launches one, and used through the product's own routes: the serial console's
// autologin shell on Debian's kernel under systemd, the agent that cloud-init delivers (self-checks,
// grading runs, a terminal, files), KubeVirt's view of the guest agent, a pause and an unpause of the
// VMI, the student's attempts to fake a grade, the idle check, and the session's end, which must end
// QEMU within the grace period. One VM, booted once, shared by the tests in order. Prints what it
// measured. The image is kept in .lab/real-guests between runs: only the first run builds it.
import { readFileSync } from "node:fs";
import { release as hostKernel } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BootLog, csrfHeader, type Session } from "../../common/api.ts";
import { GradingRun, SelfCheck } from "../../common/grading-api.ts";
import { eventually, patient } from "../../common/testing/patience.ts";
import { pngPixels } from "../../emulator/testing/png-pixels.ts";
import { jsonRequest, rawRequest } from "../../emulator/testing/raw-request.ts";
import { screenText } from "../../emulator/testing/screen-text.ts";
import { openVncViewer, typeText, vncPath } from "../../emulator/testing/vnc-viewer.ts";
import { UpgradeRefused } from "../../emulator/testing/websocket.ts";
import { residentMiB } from "../../common/resident-memory.ts";
import { qemuPidOf, untilQemuGone } from "../../emulator/guests/qemu/testing/qemu-process.ts";
import {
  bootMs,
  Measurements,
  realGuestsStateDir,
  realGuestVm,
} from "../../emulator/guests/qemu/testing/real-guests.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { ScreenTestClient } from "../screen/testing/screen-client.ts";
import {
  checkTracerLog,
  refusedTracing,
  startCheckTracer,
  traceableCheckRun,
} from "../grading/testing/check-tracing.ts";
import { aCheck, aGradingLab } from "../grading/testing/grading-fixtures.ts";
import { finishedGradingRun } from "../grading/testing/grading-runs.ts";
import { labSetup } from "../../web/features/sessions/lib/lab-setup.ts";
import { annotationKeys } from "./labels.ts";
import {
  launchRunning,
  startTestBff,
  testNamespace,
  type TestBff,
  type TestBrowser,
} from "../testing/test-bff.ts";

const graceSeconds = 30;

const lab = aGradingLab(
  [
    aCheck({
      id: "hello-file",
      title: "Create ~/hello.txt",
      selfCheck: true,
      // Found running by the tracing attack.
      run: traceableCheckRun("test -f ~/hello.txt"),
      hint: "touch makes a file.",
    }),
  ],
  {
    vm: realGuestVm,
    session: {
      minutes: 60,
      extendMinutes: 15,
      maxExtensions: 2,
      terminals: 1,
      // The graphical console too: the user data logs the student in on tty1 as well.
      consoles: ["serial", "graphical"],
      idle: { minutes: 20, warnMinutes: 5, action: "pause" },
    },
  },
);

const minute = 60_000;
/** cloud-init's last line, printed to the console when a boot's set-up is over. */
const cloudInitFinished = "finished at";
/** The BFF's clock runs ahead by this much: the idle test moves it, nothing else does. */
let offsetMs = 0;

let emulator: TestEmulator;
let bff: TestBff;
let alice: TestBrowser;
let cookie: string;
let sessionId: string;
let serial: ConsoleTestClient;
let launchedAt = 0;
let agentReady: Promise<void> = Promise.resolve();
const reasonsWhileBooting = new Set<string>();
const measured = new Measurements("real guest through the BFF, measured from the launch");

function checksPath(): string {
  return `/api/sessions/${sessionId}/checks`;
}

async function selfCheck(): Promise<SelfCheck["result"]> {
  const answer = await alice.post(checksPath());
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return SelfCheck.parse(answer.body).result;
}

/** Starts an instructor's grading run of the lab and waits for it to complete. */
async function gradingRun(instructor: TestBrowser): Promise<GradingRun> {
  const started = await instructor.post(`/api/labs/${lab.id}/grading-runs`);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const finished = await finishedGradingRun(instructor, started.body.id, 120_000);
  expect(finished.status).toBe("completed");
  return finished;
}

/** When the idle pass last counted the session active (its VM's mark), on the BFF's clock. */
async function lastActive(): Promise<number> {
  const path = `/apis/kubevirt.io/v1/namespaces/${testNamespace}/virtualmachines/${sessionId}`;
  const vm = (await jsonRequest(emulator.emulator, "GET", path)).json as {
    metadata: { annotations?: Record<string, string> };
  };
  return Date.parse(vm.metadata.annotations?.[annotationKeys.lastActive] ?? "") || 0;
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
  emulator = await startTestEmulator({ guests: "qemu", stateDir: realGuestsStateDir, deployRbac: true });
  // Self-checks as often as the test asks: it polls for the agent while the guest boots.
  bff = await startTestBff({
    labs: [lab],
    emulator,
    gradingLimits: { selfCheckIntervalMs: 1 },
    now: () => new Date(Date.now() + offsetMs),
    // A look at the agent every second once the session is quiet; half a CPU second between two
    // looks is work.
    idleTiming: { passIntervalMs: 1000, activeCpuSeconds: 0.5 },
  });
  alice = await bff.signIn("alice");
  cookie = await signInCookie(bff.url, "alice");
  launchedAt = Date.now();
  sessionId = await launchRunning(alice, lab.id, bootMs);
  measured.since("launch to session running (image ready)", launchedAt);
}, 900_000);

afterAll(async () => {
  measured.print();
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
          measured.since("launch to the first gradable self-check", launchedAt);
          return;
        }
        reasonsWhileBooting.add(result.reason ?? "(no reason)");
        await sleep(5000);
      }
    })();
    serial = await ConsoleTestClient.connect(bff.url, sessionId, { cookie });
    await serial.untilLive(bootMs);
    // A student who does not wait for the prompt types while the kernel boots, and again at the
    // getty's first login: prompt (the autologin comes with the user data, at the end of the set-up).
    serial.type("echo early-k''eys-boot\r");
    await serial.untilScreenShows("login:", bootMs);
    measured.since("launch to the first login: prompt", launchedAt);
    serial.type("echo early-k''eys-login\r");
    await serial.untilScreenShows(`student@${sessionId}:~$`, bootMs);
    measured.since("launch to the console's shell prompt", launchedAt);
    expect(await serial.run("whoami; pwd")).toBe("student\n/home/student");
    // Neither ran, as the session card's set-up hint warns. The second reached the guest: the first
    // getty took it for a login name (and asked for a password) before the set-up restarted it. Its
    // echo may share or wrap rows with the kernel's and cloud-init's console lines.
    expect(serial.screen().replaceAll("\n", "")).toContain("echo early-k''eys-login");
    const rows = serial
      .screen()
      .split("\n")
      .map((row) => row.trim());
    expect(rows).not.toContain("early-keys-boot");
    expect(rows).not.toContain("early-keys-login");
  });

  it("runs Debian's kernel under systemd, not the host's, and cloud-init to the end", async () => {
    const kernel = await serial.run("uname -r");
    expect(kernel).toMatch(/^\d+\.\d+\.\d+-\d+-cloud-amd64$/);
    expect(kernel).not.toBe(hostKernel());
    expect(await serial.run("cat /proc/1/comm")).toBe("systemd");
    expect(await serial.run("cloud-init status --wait --long", bootMs)).toMatch(/status: done/);
  });

  it("tells the page its set-up is over: cloud-init's last line is in the boot log", async () => {
    const setup = await eventually(
      async () => {
        const session = await alice.get(`/api/sessions/${sessionId}`);
        const log = await alice.get(`/api/sessions/${sessionId}/boot-log`);
        return labSetup(session.body as Session, BootLog.parse(log.body), Date.now());
      },
      (each) => each.state === "finished",
      { what: "cloud-init's final line in the boot log", timeoutMs: 120_000 },
    );
    // With its time, which the page shows: the guest's clock is the host's (QEMU's RTC), so it is
    // within the boot of now.
    expect(setup).toMatchObject({ state: "finished", at: expect.any(String) });
    const at = Date.parse((setup as { at: string }).at);
    expect(Date.now() - at).toBeLessThan(bootMs);
    expect(at - launchedAt).toBeGreaterThan(-5000);
  });

  it("reports its qemu-guest-agent to KubeVirt, with the guest's answers", async () => {
    const path = `/apis/subresources.kubevirt.io/v1/namespaces/${testNamespace}/virtualmachineinstances/${sessionId}/guestosinfo`;
    const info = await eventually(
      async () => await jsonRequest(emulator.emulator, "GET", path),
      (answer) => answer.status === 200,
      { what: "guestosinfo to answer", timeoutMs: 120_000 },
    );
    const { os } = info.json as { os: { id: string; kernelRelease: string } };
    expect(os.id).toBe("debian");
    expect(os.kernelRelease).not.toBe(hostKernel());
  });

  it("has its agent answer before the student's shell exists, and grades honestly", async () => {
    await agentReady;
    console.log(`self-checks while booting said: ${[...reasonsWhileBooting].join(" | ")}`);
    // The shell came after the agent listened (the getty restart is the user data's last command),
    // so a self-check is gradable once the prompt shows.
    const failed = await selfCheck();
    expect(failed, JSON.stringify(failed)).toMatchObject({ gradable: true, score: 0, maxScore: 1 });
    expect(failed.checks[0]).toMatchObject({ passed: false, outcome: { kind: "exit", code: 1 } });

    await serial.run("touch ~/hello.txt");
    expect(await selfCheck()).toMatchObject({ gradable: true, score: 1, maxScore: 1 });
  });

  it("runs a terminal through the agent, and moves a file in and out of the home", async () => {
    const terminal = await ConsoleTestClient.connect(bff.url, sessionId, { cookie, terminal: 1 });
    try {
      await terminal.untilLive(60_000);
      expect(await terminal.run("echo ter''minal; id -un")).toBe("terminal\nstudent");
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
    expect(await serial.run("cat ~/upload.txt; stat -c %U ~/upload.txt")).toBe("from the browser\nstudent");
    const downloaded = await fetch(url, { headers: { cookie } });
    expect(downloaded.status).toBe(200);
    expect(await downloaded.text()).toBe("from the browser\n");
  });

  it("pauses and unpauses the VMI, and the guest works on", async () => {
    const pid = qemuPidOf(sessionId);
    expect(pid).toBeDefined();
    measured.add(
      "QEMU resident memory, booted and used",
      `${residentMiB(pid!) ?? "?"} MiB (guest memory 1 GiB)`,
    );

    await pauseSubresource("pause");
    // A stopped guest's CPUs run nothing: what is typed waits in the line.
    serial.type("echo pau''sed-typing\r");
    await sleep(3000);
    expect(serial.screen()).not.toContain("paused-typing");
    const whilePaused = await selfCheck();
    expect(whilePaused.gradable).toBe(false);

    await pauseSubresource("unpause");
    await serial.untilScreenShows("paused-typing", 60_000);
    expect(await serial.run("echo al''ive")).toBe("alive");
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

    await serial.run("rm ~/hello.txt");
    const failed = (await gradingRun(ivan)).items[0]?.result;
    expect(failed, JSON.stringify(failed)).toMatchObject({ gradable: true, score: 0, maxScore: 1 });
    expect(failed?.checks[0]).toMatchObject({ passed: false, outcome: { kind: "exit", code: 1 } });
  });

  it("is not fooled by rc files that fake a check's outcome (C1)", async () => {
    // A line that answers for any shell without a terminal (the agent's check, were it to read
    // them), and a `test` that always passes, in every file a bash might read first.
    const fakes = ["'[ -t 0 ] || { echo score=1; exit 0; }'", "'test() { return 0; }; export -f test'"];
    await serial.run(
      `for f in ~/.bash_profile ~/.bashrc ~/.profile; do for l in ${fakes.join(" ")}; do echo "$l" >> $f; done; done`,
    );
    // The fakes work on a shell that reads them, without a terminal: a naive grader would be fooled.
    const naive = await serial.run("bash -lc 'test -f ~/hello.txt && echo really-there' </dev/null");
    expect(naive).toBe("score=1");
    const faked = await selfCheck();
    expect(faked, JSON.stringify(faked)).toMatchObject({ gradable: true, score: 0 });
    expect(faked.checks[0]).toMatchObject({ passed: false, outcome: { kind: "exit", code: 1 } });
    const ivan = await bff.signIn("ivan");
    expect((await gradingRun(ivan)).items[0]?.result).toMatchObject({ gradable: true, score: 0 });
  });

  it("keeps the student's programs out of a running check on the real kernel (no /proc/PID/fd, no ptrace)", async () => {
    await serial.run(startCheckTracer);
    const result = await selfCheck();
    expect(result, JSON.stringify(result)).toMatchObject({ gradable: true, score: 0 });
    expect(result.checks[0]).toMatchObject({ passed: false, outcome: { kind: "exit", code: 1 } });
    const attempts = await serial.run(checkTracerLog);
    expect(attempts).toContain(refusedTracing.readDescriptors);
    expect(attempts).toMatch(refusedTracing.writeIntoStdout);
    expect(attempts).toContain(refusedTracing.ptrace);
  });

  it("keeps the agent's port and key out of the student's reach on the real kernel (C1, M1)", async () => {
    const shown = await serial.run(
      [
        // A fake agent cannot listen where the BFF asks: the port is privileged, and taken.
        `python3 -c 'import socket; socket.socket().bind(("0.0.0.0", 899))' 2>&1 | tail -1`,
        `python3 -c 'import socket; socket.socket().bind(("0.0.0.0", 8899)); print("high port ok")' 2>&1 | tail -1`,
        "cat /etc/lab-agent/key 2>&1 | head -1",
        "ln -sf /dev/zero /etc/lab-agent/key 2>&1 | head -1",
        "pkill -f lab_agent.pyz || echo still-running",
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
    await serial.run("touch ~/hello.txt");
    expect(await selfCheck()).toMatchObject({ gradable: true, score: 1, maxScore: 1 });
  });

  it("counts the guest's real work as activity, and warns once it is quiet", async () => {
    // A busy loop, started at the prompt, runs on after the last key.
    await serial.run("(timeout 15 sh -c 'while :; do :; done' &)");
    offsetMs = 16 * minute;
    const sawWork = await eventually(lastActive, (at) => at >= Date.now() + offsetMs - patient(5000), {
      what: "the agent's CPU time counted as activity",
      timeoutMs: 30_000,
    });
    expect((await alice.get(`/api/sessions/${sessionId}`)).body.idle).toBeUndefined();

    // Once it is over, only the idle shell is left: quiet. The loop's last second may still be
    // counted once more and move the limit on; the clock then follows, as a quiet student's would.
    await serial.run("while pgrep -f 'while :' >/dev/null; do sleep 0.5; done", 60_000);
    let warned: Session["idle"];
    for (let attempt = 1; !warned; attempt += 1) {
      const since = Math.max(sawWork, await lastActive());
      offsetMs = since + 16 * minute - Date.now();
      const seen = await eventually(
        async () => ({
          idle: (await alice.get(`/api/sessions/${sessionId}`)).body.idle,
          at: await lastActive(),
        }),
        ({ idle, at }) => idle?.state === "warning" || at > since,
        { what: "the idle warning, or activity that moves the limit on", timeoutMs: 30_000 },
      );
      if (seen.idle?.state === "warning") warned = seen.idle;
      else if (attempt === 3) throw new Error("the guest never went quiet: its agent kept seeing work");
    }
    expect(warned).toMatchObject({ state: "warning", action: "pause" });
    await serial.until(
      () => serial.lastMessage("status")?.notice?.reason === "idle_warning",
      "the console's idle notice",
    );
    // A key in the console, and the student is back.
    serial.type("\r");
    await eventually(
      async () => (await alice.get(`/api/sessions/${sessionId}`)).body.idle,
      (idle) => idle === undefined,
      { what: "the warning to clear" },
    );
  });

  // KubeVirt's vnc subresource relays QEMU's own VNC server (docs/vnc.md): RFB 3.8 without
  // authentication, the VGA text console, where the user data of a graphical lab has getty log the
  // student in on tty1. Its text is read back with the VGA BIOS's font, which SeaBIOS loaded into
  // the card.
  it("shows the student's shell on the VM's screen over the vnc subresource, and keys typed there reach it", async () => {
    const viewer = await openVncViewer(emulator.emulator, vncPath(testNamespace, sessionId), 30_000);
    try {
      expect(viewer.rfb.name).toBe(`QEMU (${sessionId})`);
      const text = () => screenText(viewer.rfb.framebuffer).join("\n");
      await eventually(
        async () => text(),
        (screen) => screen.includes(`student@${sessionId}:~$`),
        { what: "the student's prompt on tty1", timeoutMs: 30_000 },
      );
      expect(viewer.rfb.framebuffer).toMatchObject({ width: 720, height: 400 });
      // The set-up's getty restart cleared the VT (getty@.service's TTYVTDisallocate=yes): the first
      // getty's prompt is gone, and agetty logged the student in without a password (login -f).
      expect(text()).toMatch(
        new RegExp(
          `^\\nDebian GNU/Linux 12 ${sessionId} tty1\\n\\n${sessionId} login: student \\(automatic login\\)\\n`,
        ),
      );
      expect(text()).not.toContain("Password:");
      const typedAt = Date.now();
      typeText(viewer, "echo on-t''ty1 $(tty) $TERM");
      viewer.type([0xff0d]);
      await eventually(
        async () => text(),
        (screen) => screen.includes("on-tty1 /dev/tty1 linux"),
        { what: "the typed command's output on the screen", timeoutMs: 30_000 },
      );
      measured.since("a command typed over VNC to its output on tty1", typedAt);
      // vnc/screenshot: QEMU's screendump as a PNG, the same screen with the same text.
      const shot = await rawRequest(
        emulator.emulator,
        "GET",
        vncPath(testNamespace, sessionId, "/screenshot"),
      );
      expect([shot.status, shot.headers["content-type"]]).toEqual([200, "image/png"]);
      const { width, height, rgb } = pngPixels(shot.bytes);
      const pixels = new Uint8Array(width * height * 4);
      rgb.forEach((value, index) => (pixels[Math.floor(index / 3) * 4 + (index % 3)] = value));
      expect(screenText({ width, height, pixels }).join("\n")).toContain("on-tty1 /dev/tty1 linux");
    } finally {
      viewer.stream.ws.close();
    }
  });

  it("lets one viewer watch the screen at a time, as virt-handler does", async () => {
    const first = await openVncViewer(emulator.emulator, vncPath(testNamespace, sessionId), 30_000);
    // preserveSession=true keeps the viewer there: the newcomer is refused (virt-handler's 503 as
    // virt-api passes it on).
    const refused = await openVncViewer(
      emulator.emulator,
      vncPath(testNamespace, sessionId, "?preserveSession=true"),
      30_000,
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(UpgradeRefused);
    expect((refused as UpgradeRefused).status).toBe(500);
    expect((refused as UpgradeRefused).body).toContain("Active VNC connection. Request denied.");
    // Without it the newcomer wins, and the first is cut without a close frame.
    const second = await openVncViewer(emulator.emulator, vncPath(testNamespace, sessionId), 30_000);
    expect(await first.stream.closed).toBe(1006);
    expect(second.rfb.framebuffer.width).toBe(720);
    second.stream.ws.close();
  });

  it("shares QEMU's screen through the BFF's hub: what is pasted there is typed, Shift and all, and every viewer reads it", async () => {
    const owner = await ScreenTestClient.connect(bff.url, sessionId, { cookie });
    const ta = await ScreenTestClient.connect(bff.url, sessionId, {
      cookie: await signInCookie(bff.url, "tara"),
      mode: "observe",
    });
    try {
      await owner.untilScreenShows(`student@${sessionId}:~$`, 30_000);
      // QEMU sends Zlib to the hub; the hub decodes it into the framebuffer both viewers are sent.
      const pastedAt = Date.now();
      owner.send({ type: "paste", text: "echo Pasted-On-QEMU $((6*7))\n" });
      await owner.until(() => owner.lastMessage("paste")?.outcome === "typed", "the paste typed", 30_000);
      await owner.untilScreenShows("Pasted-On-QEMU 42", 30_000);
      measured.since("a paste through the BFF to its output on QEMU's screen", pastedAt);
      await ta.untilScreenShows("Pasted-On-QEMU 42", 30_000);
      expect(ta.lastMessage("keyboard")).toMatchObject({ canType: false, holder: "alice" });
      // A graphical lab's VM has a USB tablet for the pointer. Debian's cloud kernel is built without
      // USB (CONFIG_USB_SUPPORT is not set), so only a desktop image's generic kernel sees it.
      const qemuLine = readFileSync(`/proc/${qemuPidOf(sessionId)}/cmdline`, "utf8").split("\0");
      expect(qemuLine).toContain("usb-tablet,bus=usb.0");
      expect(await serial.run("grep -c 'USB Tablet' /proc/bus/input/devices")).toBe("0");
    } finally {
      owner.close();
      ta.close();
    }
  });

  // KubeVirt leaves a guest's reboot to libvirt's default (no rebootPolicy: on_reboot restart), so
  // the VMI stays the same object while its guest boots again; Debian's systemd takes Control+Alt+
  // Delete as ctrl-alt-del.target, which is reboot.target. The second boot keeps the disk, so
  // cloud-init's per-instance modules do not run again, and the gettys log the student in from the
  // drop-ins already on it, after the agent.
  it("reboots the guest in the same VMI on Control+Alt+Delete over VNC, as systemd does", async () => {
    const vmiPath = `/apis/kubevirt.io/v1/namespaces/${testNamespace}/virtualmachineinstances/${sessionId}`;
    const uidBefore = (
      (await jsonRequest(emulator.emulator, "GET", vmiPath)).json as { metadata: { uid: string } }
    ).metadata.uid;
    await serial.run("echo kept > ~/before-reboot.txt");
    const kernelsBefore = serial.rowsContaining("Linux version");
    const promptsBefore = serial.rowsContaining(`student@${sessionId}:~$`);
    const setupsBefore = serial.rowsContaining(cloudInitFinished);
    // Through the BFF's hub, as the console's special-keys menu sends it: a viewer of our own straight
    // on the vnc subresource would race the hub's upstream, still lingering from the test before, for
    // the VMI's one connection (the newcomer wins), and keys sent on the loser's socket are lost.
    const owner = await ScreenTestClient.connect(bff.url, sessionId, { cookie });
    try {
      await owner.untilScreenShows(`student@${sessionId}:~$`, 30_000);
      const pressed = Date.now();
      for (const keysym of [0xffe3, 0xffe9, 0xffff]) owner.rfb.key(keysym, true);
      for (const keysym of [0xffff, 0xffe9, 0xffe3]) owner.rfb.key(keysym, false);
      await serial.untilScreenShows("reboot: Restarting system", 120_000);
      measured.since("Control+Alt+Delete to the kernel's restart", pressed);
      await eventually(
        async () => serial.rowsContaining("Linux version"),
        (count) => count > kernelsBefore,
        { what: "the second boot's kernel on the serial console", timeoutMs: 60_000 },
      );
      await owner.until(
        () => owner.text().includes(`student@${sessionId}:~$`) && !owner.text().includes("on-tty1"),
        "the second boot's autologin shell on tty1",
        bootMs,
      );
      measured.since("Control+Alt+Delete to the new boot's shell on tty1", pressed);
    } finally {
      owner.close();
    }
    const after = (await jsonRequest(emulator.emulator, "GET", vmiPath)).json as {
      metadata: { uid: string };
      status: { phase: string };
    };
    expect([after.metadata.uid, after.status.phase]).toEqual([uidBefore, "Running"]);
    // The disk is the first boot's: what the student made is still there.
    await eventually(
      async () => serial.rowsContaining(`student@${sessionId}:~$`),
      (count) => count > promptsBefore,
      { what: "the second boot's autologin shell on the serial console", timeoutMs: 60_000 },
    );
    // cloud-init's stages print to the serial console until its set-up is over, and the shell's
    // output would be interleaved with them: the autologin shell comes before cloud-init's end.
    await eventually(
      async () => serial.rowsContaining(cloudInitFinished),
      (count) => count > setupsBefore,
      { what: "the second boot's cloud-init end on the serial console", timeoutMs: bootMs },
    );
    expect(await serial.run("cat ~/before-reboot.txt")).toBe("kept");
  });

  it("ends QEMU within the grace period when the session ends", async () => {
    const pid = qemuPidOf(sessionId);
    expect(pid).toBeDefined();
    const ended = Date.now();
    const answer = await alice.delete(`/api/sessions/${sessionId}`);
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    await untilQemuGone(sessionId, (graceSeconds + 30) * 1000);
    measured.since("session end to QEMU gone", ended);
    // Well within the grace period: the guest shut itself down on the ACPI power button rather
    // than being killed when the period ran out.
    expect(Date.now() - ended).toBeLessThan(graceSeconds * 1000);
  });
});
