// Bounded concurrency: at most `max` tasks run at once; the others wait in arrival order.
export type Limiter = <T>(task: () => Promise<T>) => Promise<T>;

export function createLimiter(max: number): Limiter {
  if (!Number.isInteger(max) || max < 1)
    throw new Error(`A concurrency limit must be a whole number >= 1, not ${max}.`);
  let running = 0;
  const queue: (() => void)[] = [];
  return async (task) => {
    if (running < max) running++;
    else await new Promise<void>((resolve) => queue.push(resolve));
    try {
      return await task();
    } finally {
      // The slot passes straight to the next task, so a newcomer cannot overtake the queue.
      const next = queue.shift();
      if (next) next();
      else running--;
    }
  };
}
