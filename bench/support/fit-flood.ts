// bench/console.ts's fit-guest flood: the BFF's event-loop delay while one student floods their
// console's socket with "fit the guest" frames (a screen resize each, once), against the same seconds
// of typing in another VM without the flood.
import { echoLatencies, openRelay, viewersDownTo, waitForText, type ConsoleBff } from "./console-lines.ts";
import { fixed, pad } from "./columns.ts";

export interface LoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * The BFF's event-loop delay while another VM's console is typed into, first quietly, then while
 * its owner sends fit-guest frames as fast as a script can (reconnecting whenever the BFF closes
 * the socket), with a full scrollback so that every resize the BFF lets through costs the most.
 */
export async function measureFitFlood(
  bff: ConsoleBff,
  cookie: string,
  flooding: string,
  quiet: string,
  floodSeconds: number,
): Promise<{
  quiet: LoopDelay;
  flood: LoopDelay;
  framesSent: number;
  socketsClosed: number;
  refusedAttaches: number;
}> {
  const { line: filler } = await openRelay(bff.url, cookie, flooding);
  const filled = waitForText(filler, "fill-done");
  filler.send("seq 1 3000; echo fill''-done\r");
  await filled;
  await filler.close();
  await viewersDownTo(bff, 0);

  const { line: other } = await openRelay(bff.url, cookie, quiet);
  const typeFor = async (seconds: number) => {
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) await echoLatencies(other, 20);
  };
  await bff.ask("delay", "delay");
  await typeFor(floodSeconds);
  const quietDelay = await bff.ask("delay", "delay");

  let framesSent = 0;
  let socketsClosed = 0;
  let refusedAttaches = 0;
  let keepFlooding = true;
  const flood = async () => {
    while (keepFlooding) {
      const relay = await openRelay(bff.url, cookie, flooding).catch(() => undefined);
      if (!relay) {
        // Reopened too often: the BFF refuses the upgrade (429) until the allowance refills.
        refusedAttaches += 1;
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      const { socket } = relay;
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      let open = true;
      void closed.then(() => (open = false));
      while (open && keepFlooding) {
        for (let burst = 0; burst < 50 && open; burst += 1) {
          const wide = framesSent % 2 === 0;
          socket.send(JSON.stringify({ type: "fit-guest", cols: wide ? 120 : 100, rows: wide ? 40 : 30 }));
          framesSent += 1;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      if (open) socket.close();
      else socketsClosed += 1;
      await closed;
    }
  };
  const flooder = flood();
  await typeFor(floodSeconds);
  const floodDelay = await bff.ask("delay", "delay");
  keepFlooding = false;
  await flooder;
  await other.close();
  await viewersDownTo(bff, 0);
  const pick = ({ p50Ms, p99Ms, maxMs }: LoopDelay): LoopDelay => ({ p50Ms, p99Ms, maxMs });
  return { quiet: pick(quietDelay), flood: pick(floodDelay), framesSent, socketsClosed, refusedAttaches };
}

export type FitFlood = Awaited<ReturnType<typeof measureFitFlood>>;

export function reportFitFlood(fitFlood: FitFlood): void {
  const { quiet: calm, flood: stormy } = fitFlood;
  console.log(
    `\nThe BFF's event-loop delay (ms) while typing in one VM; its owner floods another with fit-guest frames`,
  );
  console.log(`  ${"".padEnd(22)}${pad("p50", 8)}${pad("p99", 8)}${pad("max", 8)}`);
  for (const [label, delay] of [
    ["no flood", calm],
    ["fit-guest flood", stormy],
  ] as const) {
    console.log(
      `  ${label.padEnd(22)}${pad(fixed(delay.p50Ms, 2), 8)}${pad(fixed(delay.p99Ms, 2), 8)}${pad(fixed(delay.maxMs, 1), 8)}`,
    );
  }
  console.log(
    `  ratio p99 ${fixed(stormy.p99Ms / calm.p99Ms, 2)}x; ${fitFlood.framesSent} frames sent, ${fitFlood.socketsClosed} flooding sockets closed by the BFF, ${fitFlood.refusedAttaches} reopenings refused; goal p99 < 20 ms ${stormy.p99Ms < 20 ? "ok" : "MISSED"}`,
  );
}
