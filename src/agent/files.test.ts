// The agent's files (docs/agent.md, "Files"), against src/agent/lab_agent/ as a real process and
// the BFF's own client for them (server/files/agent-files.ts) over TCP: byte for byte in both
// directions, as the checks' user, inside the home only, and refused before the bytes are sent.
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileLimits, filesAgentVersion } from "../common/files-api.ts";
import { AgentErrorBody, AgentHealth } from "../common/grading.ts";
import {
  compareVersions,
  createAgentFiles,
  FileTransferError,
  type AgentFiles,
} from "../server/files/agent-files.ts";
import { fileSizeHeader, framedLength } from "../server/files/file-frames.ts";
import { frameMac } from "../server/agent/signed-frames.ts";
import { agentMacHeader, signStreamRequest, verifyAgentAnswer } from "../server/agent/signature.ts";
import { createAgentFixture, type AgentFixture } from "./testing/agent-fixture.ts";
import {
  agentArgs,
  agentScript,
  callAgent,
  copyAgent,
  startAgent,
  type AgentProcess,
} from "./testing/python-agent.ts";

let fixture: AgentFixture;
let agent: AgentProcess;
let files: AgentFiles;
const signal = new AbortController().signal;

beforeAll(async () => {
  fixture = await createAgentFixture();
  agent = await startAgent({ keyFile: fixture.keyFile, user: fixture.user, home: fixture.home });
  files = createAgentFiles({
    connect: async () =>
      new Promise((resolve, reject) => {
        const socket = connect(agent.port, "127.0.0.1", () => resolve(socket));
        socket.once("error", reject);
      }),
    keyFor: () => fixture.key,
    health: async () => AgentHealth.parse((await callAgent(agent.port, fixture.key, "/v1/health")).json()),
  });
});

afterAll(async () => {
  await agent?.stop();
  await fixture?.remove();
});

/** What the client refused with, as status, code and message. */
async function refusalOf(work: Promise<unknown>): Promise<FileTransferError> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof FileTransferError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

async function download(path: string): Promise<Buffer> {
  const { size, body } = await files.download("session", path, signal);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  const data = Buffer.concat(chunks);
  expect(data.length).toBe(size);
  return data;
}

/** Temporary upload files the agent may have left in a folder. */
const leftovers = (folder: string) => readdirSync(folder).filter((name) => name.endsWith(".upload"));

describe("files", () => {
  it("reports a version that has them", async () => {
    const answer = await callAgent(agent.port, fixture.key, "/v1/health");
    const { version } = AgentHealth.parse(answer.json());
    expect(compareVersions(version, filesAgentVersion)).toBeGreaterThanOrEqual(0);
  });

  it("uploads 5 MiB as the checks' user and downloads the same bytes", async () => {
    const data = randomBytes(5 * 1024 * 1024 + 123);
    const done = await files.upload("session", "./upload.bin", data.length, Readable.from([data]), signal);
    expect(done).toEqual({ path: "upload.bin", bytes: data.length });
    const written = join(fixture.home, "upload.bin");
    expect(readFileSync(written).equals(data)).toBe(true);
    // Never root's: the student's, as if they had written it (nobody when the tests run as root).
    const owner = statSync(written).uid;
    expect(owner).toBe(process.getuid?.() === 0 ? 65534 : process.getuid?.());
    expect(statSync(written).mode & 0o777).toBe(0o644);
    expect((await download("upload.bin")).equals(data)).toBe(true);
    expect(leftovers(fixture.home)).toEqual([]);
  });

  it("replaces a file in a folder whole, keeping its mode", async () => {
    mkdirSync(join(fixture.home, "bin"), { mode: 0o777 });
    chmodSync(join(fixture.home, "bin"), 0o777);
    writeFileSync(join(fixture.home, "bin", "run.sh"), "old\n", { mode: 0o755 });
    chmodSync(join(fixture.home, "bin", "run.sh"), 0o755);
    await files.upload("session", "bin/run.sh", 4, Readable.from([Buffer.from("new\n")]), signal);
    expect(readFileSync(join(fixture.home, "bin", "run.sh"), "utf8")).toBe("new\n");
    expect(statSync(join(fixture.home, "bin", "run.sh")).mode & 0o777).toBe(0o755);
  });

  it("streams the largest file through without holding it", async () => {
    const peakMegabytes = () => {
      const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${agent.pid}/status`, "utf8"));
      return Number(match?.[1] ?? 0) / 1024;
    };
    const before = peakMegabytes();
    const data = randomBytes(fileLimits.maxBytes);
    await files.upload("session", "largest.bin", data.length, Readable.from([data]), signal);
    expect((await download("largest.bin")).equals(data)).toBe(true);
    // The agent's peak grows by a few frames, not by the file (32 MiB).
    expect(peakMegabytes() - before).toBeLessThan(8);
  });

  it("moves an empty file", async () => {
    await files.upload("session", "empty.txt", 0, Readable.from([]), signal);
    expect(statSync(join(fixture.home, "empty.txt")).size).toBe(0);
    expect((await download("empty.txt")).length).toBe(0);
  });

  it("says a file or folder is missing", async () => {
    const missing = await refusalOf(download("nothing-here.txt"));
    expect([missing.status, missing.code, missing.message]).toEqual([
      404,
      "no_such_file",
      "There is no file nothing-here.txt in the home folder.",
    ]);
    const noFolder = await refusalOf(files.upload("session", "no/such.txt", 1, Readable.from(["x"]), signal));
    expect([noFolder.status, noFolder.code]).toEqual([404, "no_such_folder"]);
    const folder = await refusalOf(download("bin"));
    expect([folder.status, folder.code]).toEqual([400, "not_a_file"]);
  });

  it("refuses paths outside the home: .., absolute, and links that leave it", async () => {
    symlinkSync("/etc", join(fixture.home, "etc-link"));
    symlinkSync("/etc/hostname", join(fixture.home, "hostname-link"));
    for (const path of ["../key", "bin/../../key", "/etc/hostname", "~/x"]) {
      const refused = await refusalOf(download(path));
      expect([path, refused.status, refused.code]).toEqual([path, 400, "invalid_path"]);
    }
    for (const path of ["etc-link/hostname", "hostname-link"]) {
      const refused = await refusalOf(download(path));
      expect([path, refused.status, refused.code]).toEqual([path, 403, "outside_home"]);
    }
    const upload = await refusalOf(
      files.upload("session", "etc-link/planted", 1, Readable.from(["x"]), signal),
    );
    expect([upload.status, upload.code]).toEqual([403, "outside_home"]);
    expect(existsSync("/etc/planted")).toBe(false);
    // A link that stays in the home is the student's own business.
    symlinkSync("upload.bin", join(fixture.home, "same-file"));
    expect((await download("same-file")).length).toBe(5 * 1024 * 1024 + 123);
  });

  it("reads nothing the student may not read", async () => {
    writeFileSync(join(fixture.home, "secret.txt"), "not yours\n");
    chmodSync(join(fixture.home, "secret.txt"), 0o000);
    const refused = await refusalOf(download("secret.txt"));
    expect([refused.status, refused.code]).toEqual([403, "permission_denied"]);
  });

  it("refuses a file over the cap before a byte of it is sent", async () => {
    let pulled = false;
    const body = new Readable({
      read() {
        pulled = true;
        this.push(null);
      },
    });
    const size = 100 * 1024 * 1024;
    const refused = await refusalOf(files.upload("session", "huge.bin", size, body, signal));
    expect([refused.status, refused.code, refused.message]).toEqual([
      413,
      "too_large",
      `The file is 100.0 MiB; files up to ${fileLimits.maxBytes / 1024 / 1024}.0 MiB can be uploaded.`,
    ]);
    expect(pulled).toBe(false);
    expect(existsSync(join(fixture.home, "huge.bin"))).toBe(false);
  });

  it("writes nothing of an upload whose frame is not signed with the key", async () => {
    const data = Buffer.alloc(100_000, 7);
    const target = "/v1/files?path=forged.bin";
    const signed = signStreamRequest(fixture.key, "PUT", target, data.length);
    const first = data.subarray(0, 65536);
    const second = data.subarray(65536);
    const frames = Buffer.concat([
      frameMac(fixture.key, "lab-agent-frame:v1", signed.nonce, 0, first),
      first,
      // Signed for another place in the stream: moved frames do not verify either.
      frameMac(fixture.key, "lab-agent-frame:v1", signed.nonce, 0, second),
      second,
    ]);
    expect(frames.length).toBe(framedLength(data.length));
    const answer = await new Promise<{ status: number; body: Buffer; mac: string | undefined }>(
      (resolve, reject) => {
        const call = request({
          host: "127.0.0.1",
          port: agent.port,
          method: "PUT",
          path: target,
          headers: {
            authorization: signed.authorization,
            [fileSizeHeader]: String(data.length),
            "content-length": String(frames.length),
            expect: "100-continue",
          },
        });
        call.on("continue", () => call.end(frames));
        call.on("response", async (response) => {
          const mac = response.headers[agentMacHeader];
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.from(await text(response)),
            mac: typeof mac === "string" ? mac : undefined,
          });
        });
        call.on("error", reject);
      },
    );
    expect(answer.status).toBe(400);
    expect(verifyAgentAnswer(fixture.key, signed.nonce, 400, answer.body, answer.mac)).toBe(true);
    expect(AgentErrorBody.parse(JSON.parse(answer.body.toString())).error.message).toBe(
      "Frame 1 of the upload is not signed with this VM's key.",
    );
    await expect.poll(() => leftovers(fixture.home)).toEqual([]);
    expect(existsSync(join(fixture.home, "forged.bin"))).toBe(false);
  });
});

describe("an agent from before files", () => {
  it("is told apart by its version, and the VM's owner is told what to do", async () => {
    // The agent as VMs launched before files have it: version 2.0.0, no /v1/files.
    const edits = { "config.py": /^VERSION = "[^"]+"$/m, "agent.py": /^ +"\/v1\/files": .*$/m };
    const oldScript = copyAgent(join(fixture.dir, "old_lab_agent"), (module, source) => {
      if (module === "config.py") return source.replace(edits[module], 'VERSION = "2.0.0"');
      return module === "agent.py" ? source.replace(edits[module], "") : source;
    });
    for (const [module, edit] of Object.entries(edits)) {
      expect(readFileSync(join(agentScript, module), "utf8")).toMatch(edit);
    }
    const child = spawn(
      "python3",
      ["-I", oldScript, ...agentArgs({ keyFile: fixture.keyFile, user: fixture.user, home: fixture.home })],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    try {
      const port = await new Promise<number>((resolve) => {
        let printed = "";
        child.stdout.on("data", (chunk: Buffer) => {
          printed += chunk.toString();
          const match = / listening on .*:(\d+)\n/.exec(printed);
          if (match) resolve(Number(match[1]));
        });
      });
      const oldFiles = createAgentFiles({
        connect: async () =>
          new Promise((resolve, reject) => {
            const socket = connect(port, "127.0.0.1", () => resolve(socket));
            socket.once("error", reject);
          }),
        keyFor: () => fixture.key,
        health: async () => AgentHealth.parse((await callAgent(port, fixture.key, "/v1/health")).json()),
      });
      const message = `This VM's agent (version 2.0.0) is too old to move files; they need version ${filesAgentVersion}. Only VMs launched from now on have it: save your work elsewhere, end this session and start a new one.`;
      for (const attempt of [
        () => oldFiles.download("session", "upload.bin", signal),
        () => oldFiles.upload("session", "new.txt", 1, Readable.from(["x"]), signal),
      ]) {
        const refused = await refusalOf(attempt());
        expect([refused.status, refused.code, refused.message]).toEqual([409, "agent_too_old", message]);
      }
    } finally {
      child.kill("SIGKILL");
    }
  });
});
