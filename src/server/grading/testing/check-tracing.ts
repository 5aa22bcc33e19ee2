// The security review's check-tracing attack, as a student's own program makes it: it waits for a
// running check's shell (the check writes its pid to /tmp/check.pid and lasts a second), then tries
// to read its descriptors, write a score line into its stdout and attach to it with ptrace. What
// each attempt met is left in /tmp/check-tracing.log for the test to read.

/** A check that can be found running: it writes its pid first and takes a second. */
export function traceableCheckRun(test: string): string {
  return `echo $$ > /tmp/check.pid; sleep 1; ${test}`;
}

const tracer = [
  // A pid file of an earlier check is gone before the test asks for the next one.
  "rm -f /tmp/check.pid /tmp/check-tracing.log",
  "touch /tmp/check-tracer.ready",
  "for i in $(seq 400); do [ -s /tmp/check.pid ] && break; sleep 0.05; done",
  "pid=$(cat /tmp/check.pid)",
  "readlink /proc/$pid/fd/1 2>>/tmp/check-tracing.log || echo no-readlink >>/tmp/check-tracing.log",
  "echo score=1 2>>/tmp/check-tracing.log >/proc/$pid/fd/1",
  `python3 -c 'import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); print("ptrace", libc.ptrace(16, int(sys.argv[1]), 0, 0), ctypes.get_errno())' $pid >>/tmp/check-tracing.log`,
  "echo tracer-done >>/tmp/check-tracing.log",
  "",
].join("\n");

/**
 * Typed at the student's prompt: starts the tracer in the background and returns once it waits for
 * the next check (on a slow guest its start could otherwise come after the check's).
 */
export const startCheckTracer = `rm -f /tmp/check-tracer.ready; echo ${Buffer.from(tracer).toString("base64")} | base64 -d > ~/check-tracer.sh; (bash ~/check-tracer.sh >/dev/null 2>&1 &); until [ -e /tmp/check-tracer.ready ]; do sleep 0.05; done`;

/** Typed once the check ran: waits for the tracer to finish and prints what it met. */
export const checkTracerLog =
  "until grep -qs tracer-done /tmp/check-tracing.log; do sleep 0.2; done; cat /tmp/check-tracing.log";

/** What the kernel must have refused, each attempt on its own. */
export const refusedTracing = {
  readDescriptors: "no-readlink",
  writeIntoStdout: /\/fd\/1: Permission denied/,
  // EPERM: the check runs with another group than the student's programs.
  ptrace: "ptrace -1 1",
};
