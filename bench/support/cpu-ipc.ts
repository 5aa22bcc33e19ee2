// The command every relay process of the bench answers alike (console-bff.ts, bare-pipe.ts): "cpu",
// answered with the CPU time the whole process used so far, user + system over all of its threads,
// in ms. The bench reads it before and after a run and divides the difference by the MB received.
export interface CpuMessage {
  type: "cpu";
  ms: number;
}

/** In the relay's process: answers "cpu" over IPC; false for any other command. */
export function answeredCpu(command: unknown): boolean {
  if (command !== "cpu") return false;
  const { user, system } = process.cpuUsage();
  process.send?.({ type: "cpu", ms: (user + system) / 1000 } satisfies CpuMessage);
  return true;
}

/** In the bench: the CPU ms the relay's process used so far. */
export async function cpuMsOf(relay: {
  ask(command: "cpu", answer: "cpu"): Promise<CpuMessage>;
}): Promise<number> {
  return (await relay.ask("cpu", "cpu")).ms;
}
