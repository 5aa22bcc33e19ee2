// A QEMU machine protocol client: what virt-launcher's libvirt does to a domain, done directly.
// Commands are answered in order, so each reply goes to the oldest command still waiting; events
// (SHUTDOWN, STOP, RESUME...) come in between and go to the listener.
import net from "node:net";
import { onJsonLines } from "./json-lines.ts";

interface Waiting {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class Qmp {
  private readonly waiting: Waiting[] = [];
  private closedError: Error | undefined;

  private constructor(
    private readonly socket: net.Socket,
    onEvent: (event: string, data: unknown) => void,
  ) {
    onJsonLines(socket, (message) => {
      if (typeof message.event === "string") return onEvent(message.event, message.data);
      if ("QMP" in message) return;
      const next = this.waiting.shift();
      if (!next) return;
      const error = message.error as { desc?: string } | undefined;
      if (error) next.reject(new Error(`QMP: ${error.desc ?? "error"}`));
      else next.resolve(message.return);
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      this.closedError = new Error("QEMU's monitor closed (QEMU exited)");
      for (const waiting of this.waiting.splice(0)) waiting.reject(this.closedError);
    });
  }

  /** Connects to QEMU's -qmp socket and leaves capabilities negotiation behind. */
  static async connect(path: string, onEvent: (event: string, data: unknown) => void): Promise<Qmp> {
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const client = net.createConnection(path, () => resolve(client));
      client.once("error", reject);
    });
    const qmp = new Qmp(socket, onEvent);
    await qmp.execute("qmp_capabilities");
    return qmp;
  }

  execute(command: string, args?: Record<string, unknown>): Promise<unknown> {
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.socket.write(`${JSON.stringify({ execute: command, ...(args ? { arguments: args } : {}) })}\n`);
    });
  }

  /** A human monitor command, for what QMP itself lacks in QEMU 7.2 (hostfwd_add). */
  async human(commandLine: string): Promise<string> {
    return String(await this.execute("human-monitor-command", { "command-line": commandLine }));
  }

  close(): void {
    this.socket.destroy();
  }
}
