// `npm run bench:emulator`: starts the emulator as its own process (fast timing, sandboxed guests) and
// measures it over HTTPS: creating and listing 500 VMs (per-request p50/p99), one watch event fanned
// out to 10 watchers (latency from the write to each delivery), the serial console straight from the
// emulator (echo latency of one typed byte, output throughput: the baseline for the BFF's relay), and
// the emulator's RSS while it holds 50 Running VMIs (goal: under 300 MB).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { parse as parseYaml } from "yaml";

const namespacePath = "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachines";
const vmCount = 500;
const listRounds = 50;
const watcherCount = 10;
const fanOutRounds = 20;
const runningCount = 50;
const echoSamples = 300;
// Readline erases a character with a backspace.
const backspace = new RegExp(String.fromCharCode(8));
// base64 of this many zero bytes: a third more, plus a CR LF per 76 characters.
const floodBytes = 30_000_000;

interface Connection {
  url: string;
  token: string;
  ca: string;
  agent: Agent;
}

const vmisPath = "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachineinstances";

function vm(name: string, runStrategy: string): unknown {
  return {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachine",
    metadata: { name, labels: { bench: "yes" } },
    spec: {
      runStrategy,
      template: {
        metadata: { labels: { "labconsole.dev/session": name } },
        spec: {
          domain: {
            cpu: { cores: 1 },
            memory: { guest: "1Gi" },
            devices: { disks: [{ name: "root", disk: { bus: "virtio" } }] },
          },
          volumes: [
            { name: "root", containerDisk: { image: "quay.io/kubevirt/cirros-container-disk-demo" } },
          ],
        },
      },
    },
  };
}

function call(
  connection: Connection,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, connection.url), {
      method,
      agent: connection.agent,
      ca: connection.ca,
      headers: {
        authorization: `Bearer ${connection.token}`,
        ...(payload !== undefined
          ? { "content-type": contentType, "content-length": Buffer.byteLength(payload) }
          : {}),
      },
    });
    req.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.on("error", reject);
    req.end(payload);
  });
}

async function timed(action: () => Promise<{ status: number }>, expected: number): Promise<number> {
  const start = process.hrtime.bigint();
  const { status } = await action();
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  if (status !== expected) throw new Error(`expected HTTP ${expected}, got ${status}`);
  return elapsed;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function describe(samples: number[]): string {
  return `p50 ${percentile(samples, 50).toFixed(2)} ms, p99 ${percentile(samples, 99).toFixed(2)} ms, max ${Math.max(...samples).toFixed(2)} ms (n=${samples.length})`;
}

function rssMegabytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kilobytes = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kilobytes / 1024;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Opens a watch; resolves once the response headers arrived. Calls onEvent per line. */
function openWatch(
  connection: Connection,
  resourceVersion: string,
  onEvent: (line: string) => void,
): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(`${namespacePath}?watch=true&resourceVersion=${resourceVersion}`, connection.url),
      {
        ca: connection.ca,
        // Each watch holds its own connection, as separate clients would.
        agent: false,
        headers: { authorization: `Bearer ${connection.token}` },
      },
    );
    req.on("response", (response) => {
      let buffered = "";
      response.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        let newline = buffered.indexOf("\n");
        while (newline >= 0) {
          onEvent(buffered.slice(0, newline));
          buffered = buffered.slice(newline + 1);
          newline = buffered.indexOf("\n");
        }
      });
      response.on("error", () => {});
      resolve(() => req.destroy());
    });
    req.on("error", (error) => {
      if ((error as NodeJS.ErrnoException).code !== "ECONNRESET") reject(error);
    });
    req.end();
  });
}

/** A console websocket with what it received since the last take(), and a wait for a pattern. */
async function openConsole(connection: Connection, name: string) {
  const url = new URL(
    `/apis/subresources.kubevirt.io/v1/namespaces/lab-sessions/virtualmachineinstances/${name}/console`,
    connection.url.replace(/^https:/, "wss:"),
  );
  const ws = new WebSocket(url, ["plain.kubevirt.io"], {
    ca: connection.ca,
    headers: { authorization: `Bearer ${connection.token}` },
  });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let received = "";
  let bytes = 0;
  let onData: (() => void) | undefined;
  ws.on("message", (data: Buffer) => {
    bytes += data.length;
    // Only the tail matters for matching; a flood must not fill the memory.
    received = (received + data.toString("latin1")).slice(-4096);
    onData?.();
  });
  return {
    send: (text: string) => ws.send(Buffer.from(text, "latin1"), { binary: true }),
    get bytes() {
      return bytes;
    },
    take: () => {
      const text = received;
      received = "";
      return text;
    },
    /** Resolves at the first message (or at once) whose accumulated text matches. */
    waitFor: (pattern: RegExp, timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`console: no ${pattern} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        onData = () => {
          if (!pattern.test(received)) return;
          clearTimeout(timer);
          onData = undefined;
          resolve();
        };
        onData();
      }),
    close: () => ws.close(),
  };
}

async function benchConsole(connection: Connection): Promise<void> {
  const bootStarted = performance.now();
  await call(connection, "POST", namespacePath, vm("console-bench", "Always"));
  await until(async () => {
    const vmi = JSON.parse((await call(connection, "GET", `${vmisPath}/console-bench`)).text) as {
      status?: { phase?: string; conditions?: { type: string }[] };
    };
    return (
      vmi.status?.phase === "Running" &&
      (vmi.status.conditions ?? []).some((condition) => condition.type === "AgentConnected")
    );
  }, "the console VM to boot");
  console.log(`VM created to guest agent connected: ${(performance.now() - bootStarted).toFixed(0)} ms`);

  const serial = await openConsole(connection, "console-bench");
  serial.send("\r");
  await serial.waitFor(/:~\$ $/);
  // One byte typed at the prompt, its echo back (readline behind a pty in the guest), then the same
  // for the DEL that erases it.
  const echo: number[] = [];
  for (let i = 0; i < echoSamples; i++) {
    const letter = String.fromCharCode(97 + ((i / 2) % 26));
    const [typed, echoed] = i % 2 === 0 ? [letter, new RegExp(letter)] : ["\x7f", backspace];
    serial.take();
    const sent = performance.now();
    serial.send(typed);
    await serial.waitFor(echoed);
    echo.push(performance.now() - sent);
  }
  console.log(`console echo, one typed byte to its echo: ${describe(echo)}`);

  // A redraw may trail the last echo; it must not count as flood output.
  await new Promise((resolve) => setTimeout(resolve, 100));
  serial.take();
  const before = serial.bytes;
  const started = performance.now();
  serial.send(`head -c ${floodBytes} /dev/zero | base64; echo FLOOD-$((40+2))\r`);
  await serial.waitFor(/FLOOD-42\r\n/, 120_000);
  const seconds = (performance.now() - started) / 1000;
  const megabytes = (serial.bytes - before) / 1e6;
  console.log(
    `console output throughput: ${megabytes.toFixed(1)} MB in ${seconds.toFixed(2)} s = ${(megabytes / seconds).toFixed(1)} MB/s`,
  );
  serial.close();
  await call(connection, "DELETE", `${namespacePath}/console-bench`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "lab-emulator-bench-"));
  const kubeconfigPath = join(dir, "kubeconfig");
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/emulator/main.ts",
      "--port",
      "0",
      "--timing",
      "fast",
      "--kubeconfig",
      kubeconfigPath,
      "--state-dir",
      join(dir, "state"),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (https:\/\/\S+)/.exec(output);
        if (match?.[1]) resolve(match[1]);
      });
      child.once("exit", (code) => reject(new Error(`the emulator exited with code ${code}`)));
    });
    const pid = child.pid ?? 0;
    const kubeconfig = parseYaml(readFileSync(kubeconfigPath, "utf8")) as {
      clusters: { cluster: { "certificate-authority-data": string } }[];
      users: { user: { token: string } }[];
    };
    const connection: Connection = {
      url,
      token: kubeconfig.users[0]?.user.token ?? "",
      ca: Buffer.from(kubeconfig.clusters[0]?.cluster["certificate-authority-data"] ?? "", "base64").toString(
        "utf8",
      ),
      agent: new Agent({ keepAlive: true, maxSockets: 1 }),
    };
    console.log(`emulator ${url} (pid ${pid}), Node ${process.version}`);
    console.log(`RSS after start: ${rssMegabytes(pid).toFixed(1)} MB`);

    // Warm up the code paths (JIT, schema walk) before measuring.
    for (let i = 0; i < 20; i++) await call(connection, "POST", namespacePath, vm(`warmup-${i}`, "Halted"));
    for (let i = 0; i < 20; i++) await call(connection, "DELETE", `${namespacePath}/warmup-${i}`);

    const createTimes: number[] = [];
    for (let i = 0; i < vmCount; i++) {
      createTimes.push(
        await timed(
          () => call(connection, "POST", namespacePath, vm(`bench-${String(i).padStart(3, "0")}`, "Halted")),
          201,
        ),
      );
    }
    console.log(`create ${vmCount} VMs: ${describe(createTimes)}`);

    const listTimes: number[] = [];
    let listBytes = 0;
    for (let i = 0; i < listRounds; i++) {
      const start = process.hrtime.bigint();
      const response = await call(connection, "GET", `${namespacePath}?labelSelector=bench%3Dyes`);
      listTimes.push(Number(process.hrtime.bigint() - start) / 1e6);
      const items = (JSON.parse(response.text) as { items: unknown[] }).items.length;
      if (items !== vmCount) throw new Error(`list returned ${items} VMs`);
      listBytes = response.text.length;
    }
    console.log(`list ${vmCount} VMs (${(listBytes / 1024).toFixed(0)} KiB): ${describe(listTimes)}`);
    console.log(`RSS holding ${vmCount} VMs: ${rssMegabytes(pid).toFixed(1)} MB`);

    // Fan-out: one write, ten watchers; latency from sending the write to each watcher's delivery.
    const current = JSON.parse((await call(connection, "GET", namespacePath + "?limit=1")).text) as {
      metadata: { resourceVersion: string };
    };
    const arrivals = new Map<string, number[]>();
    const closers: (() => void)[] = [];
    for (let w = 0; w < watcherCount; w++) {
      closers.push(
        await openWatch(connection, current.metadata.resourceVersion, (line) => {
          const event = JSON.parse(line) as {
            type: string;
            object: { metadata: { labels?: Record<string, string> } };
          };
          const round = event.object.metadata.labels?.round;
          if (event.type === "MODIFIED" && round)
            arrivals.set(round, [...(arrivals.get(round) ?? []), performance.now()]);
        }),
      );
    }
    const fanOut: number[] = [];
    for (let round = 0; round < fanOutRounds; round++) {
      const sent = performance.now();
      await call(
        connection,
        "PATCH",
        `${namespacePath}/bench-000`,
        { metadata: { labels: { round: String(round) } } },
        "application/merge-patch+json",
      );
      await until(
        async () => (arrivals.get(String(round))?.length ?? 0) >= watcherCount,
        "all watchers to see the event",
        10_000,
      );
      for (const arrival of arrivals.get(String(round)) ?? []) fanOut.push(arrival - sent);
    }
    for (const close of closers) close();
    console.log(
      `one watch event to ${watcherCount} watchers, write to delivery (${fanOutRounds} rounds): ${describe(fanOut)}`,
    );

    for (let i = 0; i < vmCount; i++)
      await call(connection, "DELETE", `${namespacePath}/bench-${String(i).padStart(3, "0")}`);
    await benchConsole(connection);
    for (let i = 0; i < runningCount; i++)
      await call(connection, "POST", namespacePath, vm(`running-${String(i).padStart(2, "0")}`, "Always"));
    await until(async () => {
      const list = JSON.parse((await call(connection, "GET", vmisPath)).text) as {
        items: { metadata: { name: string }; status?: { phase?: string } }[];
      };
      const running = list.items.filter(
        (item) => item.status?.phase === "Running" && item.metadata.name.startsWith("running-"),
      );
      return running.length === runningCount;
    }, `${runningCount} VMIs to run`);
    console.log(
      `RSS holding ${runningCount} Running VMIs with their guests (the ${vmCount} VMs deleted): ${rssMegabytes(pid).toFixed(1)} MB (goal < 300 MB)`,
    );
    connection.agent.destroy();
  } finally {
    // It kills its guests and removes their files before it exits.
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
