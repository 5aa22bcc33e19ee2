// KubeVirt's subresources on real guests, over real sockets: the serial console (bash behind it, newest
// connection wins, text frames ignored), port-forward to a server inside the guest with its keepalive,
// the guest agent's answers, cloud-init from inline user data and from a Secret, and the sandbox.
import { waitFor } from "../../common/testing/patience.ts";
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../cluster/objects.ts";
import { echoServerCommand } from "../guests/testing/echo-server.ts";
import { vmManifest } from "../testing/manifests.ts";
import { jsonRequest, rawRequest } from "../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../testing/start.ts";
import { pngPixels } from "../testing/png-pixels.ts";
import { screenText } from "../testing/screen-text.ts";
import { keysymsOf, openVncViewer, vncPath as vncPathOf } from "../testing/vnc-viewer.ts";
import { openStream, UpgradeRefused, type StreamClient } from "../testing/websocket.ts";
import { activeVncRefusal } from "./vnc.ts";

const namespace = "lab-sessions";
const vmsPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`;
const vmisPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances`;
const subresources = `/apis/subresources.kubevirt.io/v1/namespaces/${namespace}`;
const consolePath = (name: string) => `${subresources}/virtualmachineinstances/${name}/console`;

const shellUserData = `#cloud-config
write_files:
  - path: /home/student/lab/README.txt
    content: |
      welcome to the lab
runcmd:
  - ${JSON.stringify(echoServerCommand(8080))}
`;
const secretUserData = `#cloud-config
write_files:
  - path: /home/student/from-secret.txt
    content: delivered by a Secret
`;

interface Vmi extends KubeObject {
  status?: { phase?: string; interfaces?: { ipAddress?: string }[]; conditions?: { type: string }[] };
}

let cluster: TestEmulator;

async function vmi(name: string): Promise<Vmi | undefined> {
  const response = await jsonRequest(cluster.emulator, "GET", `${vmisPath}/${name}`);
  return response.status === 200 ? (response.json as Vmi) : undefined;
}

const hasAgent = (object: Vmi | undefined) =>
  object?.status?.conditions?.some((condition) => condition.type === "AgentConnected") === true;

async function agentConnected(name: string): Promise<Vmi> {
  return eventually(
    async () => {
      const current = await vmi(name);
      return current?.status?.phase === "Running" && hasAgent(current) ? current : undefined;
    },
    { what: `${name} to run with its agent connected` },
  );
}

/** A console with a fresh prompt and nothing received yet. */
async function consoleAtPrompt(name: string): Promise<StreamClient> {
  const client = await openStream(cluster.emulator, consolePath(name));
  client.send("\r");
  await client.waitFor(/:~\$ $/);
  client.clear();
  return client;
}

function refusal(promise: Promise<unknown>): Promise<UpgradeRefused> {
  return promise.then(
    () => {
      throw new Error("the upgrade was accepted");
    },
    (error: unknown) => {
      if (error instanceof UpgradeRefused) return error;
      throw error;
    },
  );
}

beforeAll(async () => {
  cluster = await startTestEmulator({
    guests: "sandbox",
    portForwardKeepAlive: { pingIntervalMs: 50, timeoutMs: 500 },
  });
  const create = (manifest: unknown) => jsonRequest(cluster.emulator, "POST", vmsPath, manifest);
  await create(vmManifest("shell-vm", { userData: shellUserData }));
  // As the BFF does it: the VM first, then its cloud-init Secret.
  await create(vmManifest("secret-vm", { userDataSecret: "secret-vm-cloudinit" }));
  await jsonRequest(cluster.emulator, "POST", `/api/v1/namespaces/${namespace}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "secret-vm-cloudinit" },
    data: { userData: Buffer.from(secretUserData).toString("base64") },
  });
  await Promise.all([agentConnected("shell-vm"), agentConnected("secret-vm")]);
});

afterAll(async () => {
  await cluster?.close();
});

describe("the serial console", () => {
  it("speaks plain.kubevirt.io to a real bash in the guest", async () => {
    const client = await consoleAtPrompt("shell-vm");
    expect(client.protocol).toBe("plain.kubevirt.io");
    client.send("echo answer-$((6*7)); whoami; hostname\r");
    await client.waitFor(/\ranswer-42\r\nstudent\r\nshell-vm\r\n/);
    client.ws.close(1000);
    expect(await client.closed).toBe(1000);
  });

  it("ignores text frames", async () => {
    const client = await consoleAtPrompt("shell-vm");
    client.ws.send("echo text-$((1+1))\r");
    client.send("echo binary-$((2+2))\r");
    await client.waitFor(/\rbinary-4\r\n/);
    expect(client.text).not.toContain("text-2");
    client.ws.close();
  });

  it("gives the line to the newest connection and cuts the older one without a close frame", async () => {
    const first = await consoleAtPrompt("shell-vm");
    const second = await openStream(cluster.emulator, consolePath("shell-vm"));
    expect(await first.closed).toBe(1006);
    second.send("echo second-$((3+3))\r");
    await second.waitFor(/\rsecond-6\r\n/);
    second.ws.close();
  });

  it("accepts a client that offers no subprotocol, choosing none", async () => {
    const client = await openStream(cluster.emulator, consolePath("shell-vm"), { protocols: [] });
    expect(client.protocol).toBe("");
    client.ws.close();
  });

  it("refuses before the upgrade with KubeVirt's Status bodies", async () => {
    const missing = await refusal(openStream(cluster.emulator, consolePath("no-such-vm")));
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'virtualmachineinstance.kubevirt.io "no-such-vm" not found',
      reason: "NotFound",
      details: { name: "no-such-vm", group: "kubevirt.io", kind: "virtualmachineinstance" },
      code: 404,
    });

    // Waits for a Secret that never comes: stays Scheduling.
    await jsonRequest(
      cluster.emulator,
      "POST",
      vmsPath,
      vmManifest("waiting-vm", { userDataSecret: "absent" }),
    );
    await eventually(async () =>
      (await vmi("waiting-vm"))?.status?.phase === "Scheduling" ? true : undefined,
    );
    const notRunning = await refusal(openStream(cluster.emulator, consolePath("waiting-vm")));
    expect(notRunning.status).toBe(400);
    expect(JSON.parse(notRunning.body)).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "VMI is not running",
      reason: "BadRequest",
      code: 400,
    });

    // A Secret without user data fails the boot; Once keeps the Failed VMI.
    await jsonRequest(cluster.emulator, "POST", `/api/v1/namespaces/${namespace}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "no-userdata" },
      stringData: { networkData: "{}" },
    });
    await jsonRequest(
      cluster.emulator,
      "POST",
      vmsPath,
      vmManifest("failed-vm", { runStrategy: "Once", userDataSecret: "no-userdata" }),
    );
    await eventually(async () => ((await vmi("failed-vm"))?.status?.phase === "Failed" ? true : undefined));
    const failed = await refusal(openStream(cluster.emulator, consolePath("failed-vm")));
    expect(failed.status).toBe(409);
    expect(JSON.parse(failed.body)).toMatchObject({
      message:
        'Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "failed-vm": VMI is in failed status',
      reason: "Conflict",
      code: 409,
    });

    await jsonRequest(cluster.emulator, "POST", vmsPath, vmManifest("headless-vm", { serialConsole: false }));
    await agentConnected("headless-vm");
    const headless = await refusal(openStream(cluster.emulator, consolePath("headless-vm")));
    expect(headless.status).toBe(400);
    expect(JSON.parse(headless.body)).toMatchObject({ message: "No serial consoles are present." });
  });
});

describe("the vnc stream", () => {
  const vncPath = (name: string, query = "") => vncPathOf(namespace, name, query);

  it("refuses as virt-api does: the stream before the upgrade with Status bodies, a screenshot in plain text", async () => {
    expect((await refusal(openStream(cluster.emulator, vncPath("no-such-vm")))).status).toBe(404);
    await jsonRequest(
      cluster.emulator,
      "POST",
      vmsPath,
      vmManifest("vnc-waiting-vm", { userDataSecret: "absent" }),
    );
    await eventually(async () =>
      (await vmi("vnc-waiting-vm"))?.status?.phase === "Scheduling" ? true : undefined,
    );
    const notRunning = await refusal(openStream(cluster.emulator, vncPath("vnc-waiting-vm")));
    expect(notRunning.status).toBe(400);
    expect(JSON.parse(notRunning.body)).toMatchObject({ message: "VMI is not running", code: 400 });

    await jsonRequest(cluster.emulator, "POST", vmsPath, vmManifest("no-graphics-vm", { graphics: false }));
    await agentConnected("no-graphics-vm");
    const noGraphics = await refusal(openStream(cluster.emulator, vncPath("no-graphics-vm")));
    expect(noGraphics.status).toBe(400);
    expect(JSON.parse(noGraphics.body)).toMatchObject({ message: "No graphics devices are present." });

    // The same checks refuse a screenshot, as a 500 with the reason in plain text.
    for (const [name, reason] of [
      ["no-such-vm", 'virtualmachineinstance.kubevirt.io "no-such-vm" not found'],
      ["no-graphics-vm", "No graphics devices are present."],
      ["vnc-waiting-vm", "VMI is not running"],
    ]) {
      const failed = await rawRequest(cluster.emulator, "GET", vncPath(name ?? "", "/screenshot"));
      expect([failed.status, failed.headers["content-type"], failed.text]).toEqual([
        500,
        "text/plain; charset=utf-8",
        reason,
      ]);
    }
  });

  // A Lab Console VM's VGA screen: getty's login prompt on tty1 (autologin is on the serial line).
  it("shows a sandboxed guest's tty1 as QEMU would, drawn with the VGA BIOS's font", async () => {
    const viewer = await openVncViewer(cluster.emulator, vncPath("shell-vm"), 10_000);
    expect(viewer.rfb.name).toBe("QEMU (shell-vm)");
    expect(viewer.rfb.framebuffer).toMatchObject({ width: 720, height: 400 });
    const text = () => screenText(viewer.rfb.framebuffer);
    expect(text().slice(0, 4)).toEqual(["", "Debian GNU/Linux 12 shell-vm tty1", "", "shell-vm login:"]);
    viewer.type(keysymsOf("student"));
    await eventually(async () => (text()[3] === "shell-vm login: student" ? true : undefined), {
      what: "the typed name on the screen",
    });
    viewer.type([0xff0d]);
    await eventually(async () => (text()[4] === "Password:" ? true : undefined), {
      what: "the password prompt",
    });
    viewer.stream.ws.close();
  });

  it("takes a screenshot as a PNG of the very screen a viewer sees", async () => {
    const viewer = await openVncViewer(cluster.emulator, vncPath("shell-vm"), 10_000);
    const shot = await rawRequest(
      cluster.emulator,
      "GET",
      vncPath("shell-vm", "/screenshot?moveCursor=true"),
    );
    expect(shot.status).toBe(200);
    expect(shot.headers["content-type"]).toBe("image/png");
    const { width, height, rgb } = pngPixels(shot.bytes);
    expect([width, height]).toEqual([720, 400]);
    const seen = viewer.rfb.framebuffer.pixels;
    expect(rgb.every((value, index) => value === seen[Math.floor(index / 3) * 4 + (index % 3)])).toBe(true);
    viewer.stream.ws.close();
  });

  it("keeps one viewer, the newest, unless it asks to preserve the session", async () => {
    const first = await openVncViewer(cluster.emulator, vncPath("shell-vm"), 10_000);
    const refused = await refusal(openStream(cluster.emulator, vncPath("shell-vm", "?preserveSession=true")));
    expect(refused.status).toBe(500);
    expect(JSON.parse(refused.body).message).toBe(`Internal error occurred: ${activeVncRefusal}`);
    const second = await openVncViewer(
      cluster.emulator,
      vncPath("shell-vm", "?preserveSession=false"),
      10_000,
    );
    expect(await first.stream.closed).toBe(1006);
    second.stream.ws.close();
  });
});

describe("cloud-init and the sandbox", () => {
  it("writes the files of inline and Secret user data before the prompt", async () => {
    const shell = await consoleAtPrompt("shell-vm");
    shell.send("cat ~/lab/README.txt\r");
    await shell.waitFor(/\rwelcome to the lab\r\n/);
    shell.ws.close();
    const secret = await consoleAtPrompt("secret-vm");
    secret.send("cat ~/from-secret.txt; echo\r");
    await secret.waitFor(/\rdelivered by a Secret\r\n/);
    secret.ws.close();
  });

  it("lets the guest write only in its home and its own /tmp", async () => {
    const marker = `lab-escape-${process.pid}-${Date.now()}`;
    const client = await consoleAtPrompt("shell-vm");
    const targets = [
      `/etc/${marker}`,
      `/usr/${marker}`,
      `/${marker}`,
      `/home/${marker}`,
      `${process.cwd()}/${marker}`,
    ];
    client.send(
      `for p in ${targets.join(" ")}; do touch "$p" 2>/dev/null && echo "WROTE $p" || echo "DENIED $p"; done; ` +
        `touch /tmp/${marker} ~/${marker} && echo OWN-OK; test -e ${process.cwd()}/package.json && echo SEES-REPO || echo NO-REPO\r`,
    );
    await client.waitFor(/\nOWN-OK\r\nNO-REPO\r\n/);
    expect(client.text).not.toMatch(/WROTE \//);
    for (const target of targets) expect(client.text).toContain(`DENIED ${target}`);
    for (const target of [...targets, `/tmp/${marker}`]) expect(existsSync(target)).toBe(false);
    client.ws.close();
  });
});

describe("port-forward", () => {
  const forward = (name: string, port: number | string, resource = "virtualmachineinstances") =>
    `${subresources}/${resource}/${name}/portforward/${port}`;

  /** The echo server starts in the background at boot: retry until it listens. */
  const connectEcho = (path: string, client?: { autoPong: boolean }) =>
    eventually(() => openStream(cluster.emulator, path, client ? { client } : {}), {
      what: "the echo server",
    });

  it("reaches a server inside the guest through the VMI and the VM paths", async () => {
    const viaVmi = await connectEcho(forward("shell-vm", 8080));
    viaVmi.send("ping over the vmi");
    await viaVmi.waitFor("ping over the vmi");
    const viaVm = await connectEcho(`${forward("shell-vm", 8080, "virtualmachines")}/tcp`);
    viaVm.send(Buffer.from([0, 1, 2, 255]));
    await viaVm.waitFor("\x00\x01\x02\xff");
    viaVmi.ws.close();
    viaVm.ws.close();
  });

  it("pings a quiet client, which stays connected by answering", async () => {
    const client = await connectEcho(forward("shell-vm", 8080));
    let pings = 0;
    client.ws.on("ping", (payload: Buffer) => {
      expect(payload.toString()).toBe("keep alive");
      pings += 1;
    });
    // Twenty pings 50 ms apart: twice the pong timeout of this emulator, without a byte of data.
    await waitFor(() => pings >= 20, "twenty pings");
    client.send("still here");
    await client.waitFor("still here");
    client.ws.close();
  });

  it("drops a client that answers no pings", async () => {
    const opened = Date.now();
    const client = await connectEcho(forward("shell-vm", 8080), { autoPong: false });
    expect(await client.closed).toBe(1006);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(450);
  });

  it("answers 500 dialing VM when nothing listens, and 404 for a missing VMI", async () => {
    const ip = (await vmi("shell-vm"))?.status?.interfaces?.[0]?.ipAddress;
    const refused = await refusal(openStream(cluster.emulator, forward("shell-vm", 9999)));
    expect(refused.status).toBe(500);
    const message = `dialing VM: dial tcp ${ip}:9999: connect: connection refused`;
    expect(JSON.parse(refused.body)).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `Internal error occurred: ${message}`,
      reason: "InternalError",
      details: { causes: [{ message }] },
      code: 500,
    });
    const missing = await refusal(openStream(cluster.emulator, forward("no-such-vm", 22)));
    expect(missing.status).toBe(404);
  });
});

describe("the guest agent", () => {
  it("reports AgentConnected on the VMI and mirrors it on the VM", async () => {
    const vm = (await jsonRequest(cluster.emulator, "GET", `${vmsPath}/shell-vm`)).json as Vmi;
    expect(hasAgent(vm)).toBe(true);
  });

  it("answers guestosinfo, userlist and filesystemlist in KubeVirt's shapes", async () => {
    const info = await jsonRequest(
      cluster.emulator,
      "GET",
      `${subresources}/virtualmachineinstances/shell-vm/guestosinfo`,
    );
    expect(info.status).toBe(200);
    expect(info.json).toMatchObject({ hostname: "shell-vm", userList: [{ userName: "student" }] });
    const users = await jsonRequest(
      cluster.emulator,
      "GET",
      `${subresources}/virtualmachineinstances/shell-vm/userlist`,
    );
    expect(users.json).toMatchObject({ metadata: {}, items: [{ userName: "student", domain: "" }] });
    const filesystems = await jsonRequest(
      cluster.emulator,
      "GET",
      `${subresources}/virtualmachineinstances/shell-vm/filesystemlist`,
    );
    expect(
      (filesystems.json as { items: { mountPoint: string }[] }).items.map((item) => item.mountPoint),
    ).toEqual(["/home/student", "/tmp"]);
  });

  it("fails with virt-api's plain-text 500 when the VMI is missing or not running", async () => {
    const missing = await rawRequest(
      cluster.emulator,
      "GET",
      `${subresources}/virtualmachineinstances/ghost/userlist`,
    );
    expect(missing.status).toBe(500);
    expect(missing.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(missing.text).toBe('virtualmachineinstance.kubevirt.io "ghost" not found');
    await jsonRequest(
      cluster.emulator,
      "POST",
      vmsPath,
      vmManifest("pending-vm", { userDataSecret: "never" }),
    );
    await eventually(async () => ((await vmi("pending-vm")) ? true : undefined));
    const pending = await rawRequest(
      cluster.emulator,
      "GET",
      `${subresources}/virtualmachineinstances/pending-vm/guestosinfo`,
    );
    expect(pending.status).toBe(500);
    expect(pending.text).toBe(
      'Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "pending-vm": VMI is not running',
    );
  });
});
