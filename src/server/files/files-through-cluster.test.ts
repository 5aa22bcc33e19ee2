// Files in and out of a student's home end to end: sessions launched through the BFF on an emulator
// with real guests, the BFF reaching each VM's agent through the emulator's portforward subresource,
// the agent writing and reading as the student. The guests' disk is small, so that it can be filled.
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csrfHeader, type Me } from "../../common/api.ts";
import { fileLimits } from "../../common/files-api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { encodeSignIn } from "../auth/current-user.ts";
import { aCheck, aGradingLab } from "../grading/testing/grading-fixtures.ts";
import { runInConsole } from "../grading/testing/guest-console.ts";
import { eventually } from "../../common/testing/patience.ts";
import { launchRunning, startTestBff, testNamespace, type TestBff } from "../testing/test-bff.ts";

const lab = aGradingLab([aCheck({ id: "hello", run: "true", selfCheck: true })]);
const people = {
  alice: { username: "alice", role: "student", sections: [] },
  bob: { username: "bob", role: "student", sections: [] },
  tara: { username: "tara", role: "ta", sections: [] },
  ivan: { username: "ivan", role: "instructor", sections: [] },
} satisfies Record<string, Me>;
type Person = keyof typeof people;

let emulator: TestEmulator;
let bff: TestBff;
let sessionId: string;

function cookieOf(person: Person): string {
  const signIn = bff.signIns.create(people[person]);
  return `lab_sign_in=${bff.app.signCookie(encodeSignIn(signIn))}`;
}

const filesUrl = (path: string) =>
  `${bff.url}/api/sessions/${sessionId}/files?path=${encodeURIComponent(path)}`;

async function upload(person: Person, path: string, data: Buffer, headers: Record<string, string> = {}) {
  const response = await fetch(filesUrl(path), {
    method: "PUT",
    headers: {
      cookie: cookieOf(person),
      [csrfHeader.name]: csrfHeader.value,
      "content-type": "application/octet-stream",
      ...headers,
    },
    body: new Uint8Array(data),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary fields
}

async function download(person: Person, path: string) {
  const response = await fetch(filesUrl(path), { headers: { cookie: cookieOf(person) } });
  const data = Buffer.from(await response.arrayBuffer());
  const json = response.headers.get("content-type")?.startsWith("application/json") ?? false;
  return {
    status: response.status,
    headers: response.headers,
    data,
    error: json ? (JSON.parse(data.toString()).error as { code: string; message: string }) : undefined,
  };
}

function inGuest(command: string): Promise<string> {
  return runInConsole(
    { kubeConfig: emulator.kubeConfig, namespace: testNamespace, vmiName: sessionId },
    command,
  );
}

async function auditOf(action: string) {
  const answer = await fetch(`${bff.url}/api/audit?action=${action}&session=${sessionId}`, {
    headers: { cookie: cookieOf("ivan") },
  });
  return ((await answer.json()) as { items: { actor: string; details: Record<string, unknown> }[] }).items;
}

beforeAll(async () => {
  emulator = await startTestEmulator({
    guests: "sandbox",
    deployRbac: true,
    cluster: { guestLimits: { disk: "64Mi" } },
  });
  bff = await startTestBff({ labs: [lab], emulator });
  sessionId = await launchRunning(await bff.signIn("alice"), lab.id);
  // The agent listens a moment after the VM runs: its first plain answer says so.
  await eventually(
    () => download("alice", "not-there-yet"),
    (answer) => answer.error?.code === "no_such_file",
    { timeoutMs: 20_000, what: "the VM's agent to answer" },
  );
}, 60_000);

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

describe("files in and out of the student's home", () => {
  it("uploads 5 MiB and downloads the same bytes, for the owner and for staff, audited", async () => {
    const data = randomBytes(5 * 1024 * 1024);
    const uploaded = await upload("alice", "lab1/answer.bin", data);
    // No lab1 folder yet: said plainly, nothing written.
    expect(uploaded.status).toBe(404);
    expect(uploaded.body.error).toEqual({
      code: "no_such_folder",
      reason: "no_such_folder",
      params: { path: "lab1/answer.bin" },
      message: "There is no folder lab1 in the home folder.",
    });
    await inGuest("mkdir ~/lab1");
    const done = await upload("alice", "lab1/answer.bin", data);
    expect(done).toEqual({ status: 200, body: { path: "lab1/answer.bin", bytes: data.length } });
    // The student's file, as if they had written it themselves.
    expect(await inGuest("stat -c owner=%U ~/lab1/answer.bin")).toContain("owner=student");

    for (const person of ["alice", "tara"] as const) {
      const answer = await download(person, "lab1/answer.bin");
      expect(answer.status).toBe(200);
      expect(answer.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''answer.bin");
      expect(answer.data.equals(data)).toBe(true);
    }
    expect((await auditOf("file-upload")).map((entry) => [entry.actor, entry.details])).toEqual([
      ["alice", { path: "lab1/answer.bin", bytes: data.length }],
    ]);
    expect((await auditOf("file-download")).map((entry) => entry.actor).sort()).toEqual(
      expect.arrayContaining(["alice", "tara"]),
    );
  });

  it("refuses 100 MiB with a clear message before it is all sent", async () => {
    const size = 100 * 1024 * 1024;
    let sent = 0;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const call = request(filesUrl("huge.bin"), {
        method: "PUT",
        headers: {
          cookie: cookieOf("alice"),
          [csrfHeader.name]: csrfHeader.value,
          "content-type": "application/octet-stream",
          "content-length": String(size),
        },
      });
      const chunk = Buffer.alloc(256 * 1024);
      const pump = () => {
        while (sent < size) {
          sent += chunk.length;
          if (!call.write(chunk)) return void call.once("drain", pump);
        }
        call.end();
      };
      call.on("response", (response) => {
        let body = "";
        response.on("data", (part: Buffer) => (body += part.toString()));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      });
      // Once answered, the BFF closes the connection: the rest of the body has nowhere to go.
      call.on("error", (error) => (sent < size ? undefined : reject(error)));
      pump();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error).toEqual({
      code: "too_large",
      reason: "too_large",
      params: { maxMiB: fileLimits.maxBytes / 1024 / 1024 },
      message: `The file is 100.0 MiB; files up to ${(fileLimits.maxBytes / 1024 / 1024).toFixed(1)} MiB can be uploaded.`,
    });
    expect(sent).toBeLessThan(size);
  });

  it("says when a file is missing", async () => {
    const answer = await download("alice", "no-such-file.txt");
    expect(answer.status).toBe(404);
    expect(answer.error).toEqual({
      code: "no_such_file",
      reason: "no_such_file",
      params: { path: "no-such-file.txt" },
      message: "There is no file no-such-file.txt in the home folder.",
    });
  });

  it("refuses paths that leave the home: .., absolute, and a link out of it", async () => {
    for (const path of ["../../etc/passwd", "/etc/passwd"]) {
      const answer = await download("alice", path);
      expect([path, answer.status, answer.error?.code]).toEqual([path, 400, "invalid_path"]);
      const put = await upload("alice", path, Buffer.from("x"));
      expect([path, put.status, put.body.error.code]).toEqual([path, 400, "invalid_path"]);
    }
    await inGuest("ln -s /etc ~/etc-link");
    const answer = await download("tara", "etc-link/passwd");
    expect(answer.status).toBe(403);
    expect(answer.error).toEqual({
      code: "outside_home",
      reason: "outside_home",
      params: { path: "etc-link/passwd" },
      message: "etc-link/passwd leads outside the home folder (a symbolic link).",
    });
    const put = await upload("alice", "etc-link/planted", Buffer.from("x"));
    expect([put.status, put.body.error.code]).toEqual([403, "outside_home"]);
  });

  it("says the disk is full, and works again once it has room", async () => {
    await inGuest("head -c 80M /dev/zero > ~/filler 2>/dev/null; df -h ~ | tail -1");
    const refused = await upload("alice", "more.bin", randomBytes(1024 * 1024));
    expect(refused.status).toBe(507);
    expect(refused.body.error.code).toBe("disk_full");
    expect(refused.body.error.message).toMatch(
      /^The VM's disk is full: more\.bin needs 1\.0 MiB, 0\.\d MiB is free\.$/,
    );
    expect(await inGuest("echo leftovers=$(ls -a ~ | grep -c 'upload$')")).toContain("leftovers=0");
    await inGuest("rm ~/filler");
    expect((await upload("alice", "more.bin", randomBytes(1024 * 1024))).status).toBe(200);

    // Room for one of two: each finds room before it starts, so the disk fills mid-write. Which one
    // fails, or whether both do (their writes interleave), is the race's; that the one that fails says
    // so and leaves nothing behind are not.
    await inGuest(
      "head -c $(( $(df --output=avail -B1 ~ | tail -1) - 7 * 1024 * 1024 )) /dev/zero > ~/filler",
    );
    const both = await Promise.all(
      ["one.bin", "two.bin"].map((name) => upload("alice", name, randomBytes(5 * 1024 * 1024))),
    );
    const failed = both.filter((answer) => answer.status !== 200);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.map((answer) => [answer.status, answer.body.error.code])).toEqual(
      failed.map(() => [507, "disk_full"]),
    );
    // Nothing is left of the one that did not fit.
    expect(await inGuest("echo leftovers=$(ls -a ~ | grep -c 'upload$')")).toContain("leftovers=0");
    await inGuest("rm ~/filler");
  });

  it("lets the owner upload, the owner and staff download, and nobody else know it is there", async () => {
    const data = Buffer.from("owner's notes\n");
    expect((await upload("alice", "notes.txt", data)).status).toBe(200);
    // Staff may look, never write into a student's home.
    const byTa = await upload("tara", "notes.txt", Buffer.from("changed"));
    expect([byTa.status, byTa.body.error.code]).toEqual([403, "forbidden"]);
    expect((await download("ivan", "notes.txt")).data.equals(data)).toBe(true);
    // Another student: the sessions API's 404, for both.
    const bobGets = await download("bob", "notes.txt");
    const bobPuts = await upload("bob", "notes.txt", Buffer.from("mine"));
    expect([bobGets.status, bobGets.error?.code, bobPuts.status, bobPuts.body.error.code]).toEqual([
      404,
      "not_found",
      404,
      "not_found",
    ]);
    // An upload is a change: without the CSRF header it is refused.
    const forged = await fetch(filesUrl("notes.txt"), {
      method: "PUT",
      headers: { cookie: cookieOf("alice"), "content-type": "application/octet-stream" },
      body: "forged",
    });
    expect(forged.status).toBe(403);
    expect((await download("alice", "notes.txt")).data.equals(data)).toBe(true);
  });

  it("moves a TA's download with a helper the student's own programs cannot trace", async () => {
    // 30 MiB, read by nobody: the helper serving it waits, blocked, until the download is let go.
    await inGuest("head -c 30M /dev/zero > ~/big.bin");
    const held = request(filesUrl("big.bin"), { headers: { cookie: cookieOf("tara") } });
    const answered = new Promise<number>((resolve) =>
      held.once("response", (res) => resolve(res.statusCode ?? 0)),
    );
    held.end();
    expect(await answered).toBe(200);
    try {
      // As the student, in the guest: PTRACE_ATTACH (16) on the helper, as the security review did.
      const tried = await inGuest(
        "pid=$(pgrep -f -- '--file-helper read' | head -1); grep ^Gid /proc/$pid/status; " +
          `python3 -c 'import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); ` +
          `print("attach", libc.ptrace(16, int(sys.argv[1]), 0, 0), ctypes.get_errno())' $pid`,
      );
      // Nobody's gid (65534) as its own; ptrace refused: EPERM (1).
      expect(tried).toMatch(/Gid:\s+65534\s+65534\s+65534\s+65534/);
      expect(tried).toContain("attach -1 1");
    } finally {
      held.destroy();
      await inGuest("rm -f ~/big.bin");
    }
  });
});
