// At most `max` tasks at once, the rest wait their turn in arrival order.
export type Limiter = <T>(task: () => Promise<T>) => Promise<T>;

export function createLimiter(max: number): Limiter {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next task, so `running` never drops and rises in between.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
