/** Before the app (and its logger) exists, start-up messages go to the console at the configured level. */
export function startupLog(level: string) {
  const quiet = level === "silent" || level === "fatal" || level === "error";
  return {
    info: (message: string) => {
      if (!quiet && level !== "warn") console.log(message);
    },
    warn: (message: string) => {
      if (!quiet) console.warn(message);
    },
  };
}
