// Where a fresh console's screen, taken from the serial console log, meets the live output of the
// line just opened. Both carry what the guest printed after the line opened and before the log was
// read; this finds that stretch so that it is shown once.
//
// The log is not the guest's bytes as printed: virt-tail prints complete lines only (a prompt
// waits for the newline after it), and the container runtime drops the CR before each line's LF
// (containerd's readLine). So the two are compared line by line, in the log's form.
const newline = 0x0a;
const carriageReturn = 0x0d;
const crlf = Buffer.from("\r\n");

/** The log's complete lines, each without its LF (a line cut short by a byte limit is left out). */
function logLines(log: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  for (let end = log.indexOf(newline); end !== -1; end = log.indexOf(newline, start)) {
    lines.push(log.subarray(start, end));
    start = end + 1;
  }
  return lines;
}

/** The log as a terminal should print it: each line's CR given back before its LF. */
export function logAsTerminalOutput(log: Buffer): Buffer {
  const lines = logLines(log);
  return Buffer.concat(lines.flatMap((line) => [line, crlf]));
}

/**
 * How many bytes at the start of `live` the log already holds: the longest run of live lines that
 * the log ends with. The first live line may be the end of a log line, begun before the line to the
 * VM opened (the log has the whole line, the live output only its end). Only complete live lines
 * count: the log has no partial ones. Identical lines printed just before and just after the line
 * opened cannot be told apart; they are taken as one.
 */
export function liveBytesAlreadyLogged(log: Buffer, live: Buffer): number {
  const logged = logLines(log);
  const liveLines: Buffer[] = [];
  const liveEnds: number[] = [];
  let start = 0;
  // No more live lines than the log has can be in it.
  while (liveLines.length < logged.length) {
    const end = live.indexOf(newline, start);
    if (end === -1) break;
    const cr = end > start && live[end - 1] === carriageReturn ? 1 : 0;
    liveLines.push(live.subarray(start, end - cr));
    liveEnds.push(end + 1);
    start = end + 1;
  }
  for (let count = liveLines.length; count > 0; count -= 1) {
    if (logEndsWith(logged, liveLines, count)) return liveEnds[count - 1]!;
  }
  return 0;
}

/** Whether the log's last `count` lines are the first `count` live ones (the first as a line's end). */
function logEndsWith(logged: Buffer[], liveLines: Buffer[], count: number): boolean {
  const offset = logged.length - count;
  // From the last line back: unequal candidates usually differ there.
  for (let index = count - 1; index > 0; index -= 1) {
    if (!logged[offset + index]!.equals(liveLines[index]!)) return false;
  }
  const first = logged[offset]!;
  const head = liveLines[0]!;
  return first.length >= head.length && first.subarray(first.length - head.length).equals(head);
}
