// bench/wall.ts's in-process part: 300 screen copies as the hub keeps them (screen.ts), fed realistic
// busy output, 10 lines each between passes, searched as one wall searches them (wall-matches.ts).
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { WallSearch } from "../../src/common/wall-protocol.ts";
import { defaultConsoleLimits, screenOptions } from "../../src/server/console/limits.ts";
import { ConsoleScreen } from "../../src/server/console/screen.ts";
import { WallMatches } from "../../src/server/wall/wall-matches.ts";
import { percentile } from "./spread.ts";

/** Lines a class prints: prompts, listings, compiler errors, and now and then what staff look for. */
function busyLine(screen: number, line: number): string {
  const kinds = [
    () => `student@lab-${screen}:~/project$ make`,
    () => `gcc -Wall -O2 -o main main.c util.c`,
    () => `main.c:${line % 200}:5: error: 'count${line % 7}' undeclared (first use in this function)`,
    () =>
      `-rw-r--r-- 1 student student ${(line * 37) % 9000} Dec  2 13:${String(line % 60).padStart(2, "0")} file-${line}.txt`,
    () => `tick ${(line * 7919) % 32768} ${line}`,
    () => `drwxr-xr-x 2 student student 4096 Dec  2 12:00 notes-${line}`,
    () =>
      line % 97 === 0
        ? `bash: ./run.sh: Permission denied`
        : `  ${line} packets transmitted, ${line} received`,
    () => (line % 89 === 0 ? `bash: pyhton3: command not found` : `[${line}] Running: pytest -q tests/`),
  ];
  return kinds[(screen + line) % kinds.length]!();
}

/** The JS heap in use after a full collection, in MB: where the rows kept as text live. */
function heapMb(): number {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

/** Prints the heap of the copies and the cost of each of `searches` over all of them. */
export async function inProcess(
  searchableRows: number,
  searches: readonly { label: string; search: WallSearch }[],
): Promise<void> {
  const screenCount = 300;
  const rounds = 40;
  console.log(
    `\nIn this process: ${screenCount} screen copies, a full scrollback each, ${searchableRows} searchable rows, ` +
      `${rounds} passes of 10 lines a screen`,
  );
  const heapBefore = heapMb();
  const parsed = new Map<number, () => void>();
  const screens = Array.from(
    { length: screenCount },
    (_, index) =>
      new ConsoleScreen(
        {
          ...screenOptions(defaultConsoleLimits),
          searchableRows,
          parseQuietMs: 0,
          parseAtLatestMs: 0,
          parseBatchBytes: 0,
        },
        () => parsed.get(index)?.(),
      ),
  );
  let line = 0;
  const print = async (lines: number) => {
    await Promise.all(
      screens.map((screen, index) => {
        const done = new Promise<void>((resolve) => parsed.set(index, resolve));
        const text = Array.from({ length: lines }, (_, offset) => busyLine(index, line + offset)).join(
          "\r\n",
        );
        screen.write(Buffer.from(`${text}\r\n`));
        return done;
      }),
    );
    line += lines;
  };
  await print(1000);
  // Quiet: the scrollback archived, the rows that left the screens read (before any search reads them).
  await new Promise((resolve) => setTimeout(resolve, defaultConsoleLimits.scrollbackArchiveAfterMs * 2));
  for (const screen of screens) screen.searchableScrollback();
  const heap = heapMb() - heapBefore;
  console.log(
    `  JS heap of the ${screenCount} copies, quiet: ${heap.toFixed(1)} MB (${((heap * 1024) / screenCount).toFixed(0)} KB a screen)`,
  );
  const ids = screens.map((_, index) => `s${index}`);
  const text = (index: number) => screens[index]!.text().rows;
  console.log(
    `  ${"".padEnd(20)}${"new search".padStart(14)}${"pass p50".padStart(12)}${"pass p99".padStart(12)}${"max".padStart(10)}` +
      `${"CPU a pass".padStart(12)}`,
  );
  for (const { label, search } of searches) {
    const matches = new WallMatches({
      scrollbackOf: (id) => screens[Number(id.slice(1))]!.searchableScrollback(),
    });
    ids.forEach((id, index) => matches.screenSent(id, text(index)));
    matches.setSearch(search);
    let started = performance.now();
    matches.searchUntil(Infinity);
    const fresh = performance.now() - started;
    const passes: number[] = [];
    let cpuMs = 0;
    for (let round = 0; round < rounds; round += 1) {
      await print(10);
      ids.forEach((id, index) => matches.screenSent(id, text(index)));
      const cpuBefore = process.cpuUsage();
      started = performance.now();
      matches.searchUntil(Infinity);
      passes.push(performance.now() - started);
      const cpu = process.cpuUsage(cpuBefore);
      cpuMs += (cpu.user + cpu.system) / 1000;
    }
    passes.sort((a, b) => a - b);
    const ms = (value: number) => `${value.toFixed(1)} ms`.padStart(12);
    console.log(
      `  ${label.padEnd(20)}${ms(fresh).padStart(14)}${ms(percentile(passes, 0.5))}${ms(percentile(passes, 0.99))}` +
        `${ms(passes.at(-1)!).padStart(10)}${ms(cpuMs / rounds)}`,
    );
  }
  for (const screen of screens) screen.dispose();
}
