// Signals to host processes that may have ended meanwhile: a guest's processes and the emulators
// whose leftovers a new one clears.

/** Sends `signal` to `pid`; a process that is already gone is what the caller wanted anyway. */
export function signalIfRunning(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Whether `pid` is a running process, ours or another user's (EPERM: it exists, we may not signal it). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
