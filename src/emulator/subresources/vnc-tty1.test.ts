// A graphical lab's VM screen on a sandboxed guest, through KubeVirt's vnc subresource: the user data
// gives the student autologin on tty1 (as server/sessions/vm-manifest.ts writes it), so the screen
// shows the student's shell, which takes keys as a Linux console's keyboard sends them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../common/testing/patience.ts";
import { vmManifest } from "../testing/manifests.ts";
import { jsonRequest } from "../testing/raw-request.ts";
import { screenText } from "../testing/screen-text.ts";
import { startTestEmulator, type TestEmulator } from "../testing/start.ts";
import { keysymsOf, openVncViewer, vncPath, type VncViewer } from "../testing/vnc-viewer.ts";
import { openStream } from "../testing/websocket.ts";

const namespace = "lab-sessions";
const name = "graphical-vm";
const tty1UserData = `#cloud-config
write_files:
  - path: /etc/systemd/system/getty@tty1.service.d/autologin.conf
    content: |
      [Unit]
      After=lab-agent.service

      [Service]
      ExecStart=
      ExecStart=-/sbin/agetty -o '-p -f -- \\\\u' --autologin student --noclear - $TERM
  - path: /etc/systemd/system/sleeper.service
    content: |
      [Unit]
      Description=A unit enabled at boot
      [Service]
      ExecStart=/bin/sleep infinity
      [Install]
      WantedBy=multi-user.target
runcmd:
  - systemctl enable --now sleeper.service
  - systemctl daemon-reload
  - systemctl restart serial-getty@ttyS0.service
  - systemctl restart getty@tty1.service
`;

const keys = {
  Return: 0xff0d,
  BackSpace: 0xff08,
  Up: 0xff52,
  Control_L: 0xffe3,
  Alt_L: 0xffe9,
  Delete: 0xffff,
};
const vmiPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/${name}`;

interface Vmi {
  metadata: { uid: string };
  status?: { phase?: string; conditions?: { type: string }[] };
}

async function vmi(): Promise<Vmi> {
  return (await jsonRequest(cluster.emulator, "GET", vmiPath)).json as Vmi;
}

const agentConnected = (object: Vmi) =>
  object.status?.conditions?.some(({ type }) => type === "AgentConnected") === true;

let cluster: TestEmulator;
let viewer: VncViewer;

const screen = () => screenText(viewer.rfb.framebuffer).join("\n");

function untilOnScreen(text: string | RegExp, what: string): Promise<string> {
  return eventually(
    async () => screen(),
    (shown) => (typeof text === "string" ? shown.includes(text) : text.test(shown)),
    { what, timeoutMs: 15_000 },
  );
}

beforeAll(async () => {
  cluster = await startTestEmulator({ guests: "sandbox" });
  await jsonRequest(
    cluster.emulator,
    "POST",
    `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`,
    vmManifest(name, { userData: tty1UserData }),
  );
  await eventually(vmi, (object) => object.status?.phase === "Running" && agentConnected(object), {
    what: `${name} to run with its agent connected`,
  });
  viewer = await openVncViewer(cluster.emulator, vncPath(namespace, name), 10_000);
});

afterAll(async () => {
  viewer?.stream.ws.close();
  await cluster?.close();
});

describe("tty1 with autologin on a sandboxed guest's screen", () => {
  // getty@tty1's restart clears the VT (TTYVTDisallocate=yes), so the first getty's prompt is gone.
  it("clears tty1 and logs the student in there when cloud-init restarts its getty", async () => {
    const shown = await untilOnScreen(`student@${name}:~$`, "the student's prompt on tty1");
    expect(shown).toMatch(
      new RegExp(
        `^\\nDebian GNU/Linux 12 ${name} tty1\\n\\n${name} login: student \\(automatic login\\)\\n\\nstudent@`,
      ),
    );
  });

  it("runs a shell on its own terminal, /dev/tty1, with TERM=linux and 25 rows of 80", async () => {
    viewer.type(keysymsOf('echo "[$TERM $(tty) $(readlink -f /dev/tty1) $(stty size)]"'));
    viewer.type([keys.Return]);
    await untilOnScreen("[linux /dev/pts/1 /dev/pts/1 25 80]", "the terminal's facts");
  });

  it("takes BackSpace, Control with a letter and the arrows as the console's keyboard sends them", async () => {
    viewer.type(keysymsOf("echo he''llx"));
    viewer.type([keys.BackSpace, ..."o".split("").map((c) => c.charCodeAt(0)), keys.Return]);
    await untilOnScreen(/\nhello\n/, "hello, corrected by BackSpace");
    // Control+C once sleep runs in the foreground (it says so first): a key typed sooner reaches the
    // shell instead, as on a real console.
    viewer.type(keysymsOf("sh -c 'echo ru\"\"nning; exec sleep 30'"));
    viewer.type([keys.Return]);
    await untilOnScreen(/\nrunning\n/, "sleep running");
    viewer.rfb.key(keys.Control_L, true);
    viewer.type(keysymsOf("c"));
    viewer.rfb.key(keys.Control_L, false);
    await untilOnScreen(/\nrunning\n\^C\n/, "Control+C ending sleep");
    // Up twice recalls the echo before sleep.
    viewer.type([keys.Up, keys.Up, keys.Return]);
    await untilOnScreen(/\nhello\n(.|\n)*\nhello\n/, "the recalled command's output again");
  });

  // Linux hands Control+Alt+Delete to init, and Debian's systemd reboots (ctrl-alt-del.target is
  // reboot.target); KubeVirt leaves the reboot to libvirt's default, so the VMI stays while its guest
  // boots again from the same disk.
  it("reboots the guest within its VMI on Control+Alt+Delete, keeping its disk", async () => {
    const before = await vmi();
    viewer.type(keysymsOf("echo kept > ~/kept.txt"));
    viewer.type([keys.Return]);
    const console = await openStream(
      cluster.emulator,
      `/apis/subresources.kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/${name}/console`,
    );
    try {
      await eventually(
        async () => screen(),
        (shown) => shown.includes("echo kept > ~/kept.txt\nstudent@"),
        {
          what: "the file written",
        },
      );
      for (const keysym of [keys.Control_L, keys.Alt_L, keys.Delete]) viewer.rfb.key(keysym, true);
      for (const keysym of [keys.Delete, keys.Alt_L, keys.Control_L]) viewer.rfb.key(keysym, false);
      // systemd's shutdown, then the second boot: the enabled unit starts again before the login.
      await console.waitFor(
        /Stopping sleeper\.service - A unit enabled at boot\.\.\.\r\n\[ {2}OK {2}\] Stopped sleeper\.service - A unit enabled at boot\.\r\n\[ {2}OK {2}\] Reached target reboot\.target - System Reboot\.\r\nreboot: Restarting system\r\n/,
        15_000,
      );
      await console.waitFor(
        /Restarting system\r\n(.|\r|\n)*\[ {2}OK {2}\] Started sleeper\.service(.|\r|\n)*Cloud-init v\. \S+ finished at/,
        15_000,
      );
      await console.waitFor(/finished at(.|\r|\n)*student@graphical-vm:~\$ $/, 15_000);
      // tty1 was cleared by the reset and logs the student in again, without a prompt before.
      const shown = await untilOnScreen(
        /^\nDebian GNU\/Linux 12 graphical-vm tty1\n\ngraphical-vm login: student \(automatic login\)\n\nstudent@graphical-vm:~\$/,
        "the new boot's autologin on tty1",
      );
      expect(shown).not.toContain("hello");
      const after = await eventually(vmi, agentConnected, { what: "the agent back after the reboot" });
      expect([after.metadata.uid, after.status?.phase]).toEqual([before.metadata.uid, "Running"]);
      console.clear();
      console.send("cat ~/kept.txt; systemctl is-active sleeper.service\r");
      await console.waitFor(/\rkept\r\nactive\r\n/, 10_000);
    } finally {
      console.ws.close();
    }
  });
});
