// The guest's qemu-guest-agent, reached as virt-launcher reaches it: through a virtio-serial port
// (org.qemu.guest_agent.0) whose host end is a unix socket. The agent runs in the guest under
// systemd, started by udev once the port appears, so it connects early in the boot, long before
// cloud-init has finished.
//
// The host end holds whatever was written while no agent listened, and the agent answers it all
// once it starts: every request is preceded by guest-sync-delimited with a fresh id, and answers
// before that id's are thrown away (the agent's own recipe for resynchronising).
import net from "node:net";
import { onJsonLines } from "./json-lines.ts";

const answerTimeoutMs = 3000;
/** How often the host checks that the agent still answers; virt-launcher polls at about this pace. */
const pollIntervalMs = 2000;
/** Missed answers in a row before the agent counts as gone. */
const missesUntilGone = 5;

interface Request {
  command: string;
  args: Record<string, unknown> | undefined;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class AgentChannel {
  private socket: net.Socket | undefined;
  private readonly queue: Request[] = [];
  private busy = false;
  private listener: ((message: Record<string, unknown>) => void) | undefined;
  private nextId = Math.floor(Math.random() * 1e9);
  private isConnected = false;
  private misses = 0;
  private poller: NodeJS.Timeout | undefined;
  private suspended = false;

  constructor(
    private readonly path: string,
    private readonly onChange: (connected: boolean) => void,
  ) {}

  get connected(): boolean {
    return this.isConnected;
  }

  /** Opens the host end (QEMU has made it) and starts checking for the agent. */
  async start(): Promise<void> {
    this.socket = await new Promise<net.Socket>((resolve, reject) => {
      const client = net.createConnection(this.path, () => resolve(client));
      client.once("error", reject);
    });
    this.socket.on("error", () => undefined);
    onJsonLines(this.socket, (message) => this.listener?.(message));
    this.poller = setInterval(() => void this.poll(), pollIntervalMs);
    this.poller.unref();
  }

  /** A paused guest cannot answer; that is no reason to report its agent gone. */
  suspend(suspended: boolean): void {
    this.suspended = suspended;
  }

  /** One agent command's answer (its "return"); rejects when the agent does not answer in time. */
  execute(command: string, args?: Record<string, unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.queue.push({ command, args, resolve, reject });
      void this.drain();
    });
  }

  stop(): void {
    clearInterval(this.poller);
    this.socket?.destroy();
    for (const request of this.queue.splice(0)) request.reject(new Error("the guest is not running"));
    this.setConnected(false);
  }

  private async poll(): Promise<void> {
    if (this.suspended || this.busy) return;
    try {
      await this.execute("guest-ping");
      this.misses = 0;
      this.setConnected(true);
    } catch {
      this.misses += 1;
      if (this.misses >= missesUntilGone) this.setConnected(false);
    }
  }

  private async drain(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      let request;
      while ((request = this.queue.shift())) {
        try {
          const id = this.nextId++;
          await this.send({ execute: "guest-sync-delimited", arguments: { id } }, (m) => m.return === id);
          const answer = await this.send(
            { execute: request.command, ...(request.args ? { arguments: request.args } : {}) },
            () => true,
          );
          if (answer.error) {
            const desc = (answer.error as { desc?: string }).desc ?? "error";
            request.reject(new Error(`guest agent: ${request.command}: ${desc}`));
          } else {
            request.resolve(answer.return);
          }
        } catch (error) {
          request.reject(error as Error);
        }
      }
    } finally {
      this.busy = false;
    }
  }

  /** Writes one message and waits for the first answer that `accept` takes. */
  private send(
    message: Record<string, unknown>,
    accept: (answer: Record<string, unknown>) => boolean,
  ): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listener = undefined;
        reject(new Error("the guest agent did not answer"));
      }, answerTimeoutMs);
      this.listener = (answer) => {
        if (!accept(answer)) return;
        clearTimeout(timer);
        this.listener = undefined;
        resolve(answer);
      };
      // The delimiter byte tells an agent mid-way through a stale request to drop it.
      const prefix = message.execute === "guest-sync-delimited" ? "\xff" : "";
      this.socket?.write(
        Buffer.concat([Buffer.from(prefix, "latin1"), Buffer.from(`${JSON.stringify(message)}\n`)]),
      );
    });
  }

  private setConnected(connected: boolean): void {
    if (this.isConnected === connected) return;
    this.isConnected = connected;
    this.onChange(connected);
  }
}
