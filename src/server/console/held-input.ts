// Keys typed while a console's line to the VM is not up (it is connecting, or reconnecting after a
// drop): held in order and sent once the line is, rather than lost. A few lines' worth at most: past
// that the typist is told nothing more was taken (console/shared-console.ts), never left guessing.
export class HeldInput {
  private chunks: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** Holds the keys; false, holding none of them, when they would not fit. */
  hold(keys: Buffer): boolean {
    if (this.bytes + keys.length > this.maxBytes) return false;
    this.chunks.push(keys);
    this.bytes += keys.length;
    return true;
  }

  /** Everything held, oldest first; nothing is held afterwards. */
  take(): Buffer[] {
    const chunks = this.chunks;
    this.chunks = [];
    this.bytes = 0;
    return chunks;
  }
}
