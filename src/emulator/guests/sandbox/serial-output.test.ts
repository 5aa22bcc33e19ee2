import { describe, expect, it } from "vitest";
import { SerialOutputProcessing } from "./serial-output.ts";

async function through(...chunks: string[]): Promise<string> {
  const processing = new SerialOutputProcessing();
  const out: Buffer[] = [];
  processing.on("data", (chunk: Buffer) => out.push(chunk));
  for (const chunk of chunks) processing.write(Buffer.from(chunk));
  processing.end();
  await new Promise((resolve) => processing.on("end", resolve));
  return Buffer.concat(out).toString();
}

describe("a serial line's output processing (ONLCR)", () => {
  it("sends a bare line feed as CR LF, as a guest's ttyS0 does", async () => {
    expect(await through("Cloud-init v. 24.4 running 'init'\nnext line\n")).toBe(
      "Cloud-init v. 24.4 running 'init'\r\nnext line\r\n",
    );
  });

  it("leaves CR LF alone, also split between two writes", async () => {
    expect(await through("prompt\r\n", "out\r", "\nend\n")).toBe("prompt\r\nout\r\nend\r\n");
  });

  it("passes everything as it is once the console's shell runs: its pty's termios are the programs'", async () => {
    const processing = new SerialOutputProcessing();
    const out: Buffer[] = [];
    processing.on("data", (chunk: Buffer) => out.push(chunk));
    processing.write(Buffer.from("boot\n"));
    await new Promise((resolve) => setImmediate(resolve));
    processing.shellStarted();
    // vim with ONLCR off moves down a row, in the same column, with a bare LF.
    processing.end(Buffer.from("\x1b[5;10Hx\ny"));
    await new Promise((resolve) => processing.on("end", resolve));
    expect(Buffer.concat(out).toString()).toBe("boot\r\n\x1b[5;10Hx\ny");
  });

  it("passes every other byte as it is", async () => {
    expect(await through("\x1b[2J\x1b[H", "\r", "é\t\n")).toBe("\x1b[2J\x1b[H\ré\t\r\n");
  });
});
