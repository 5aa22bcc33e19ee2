// What the real-guest tests and bench share: where the image and the guests' files are kept between
// runs (built once, then found by the hash of its inputs), and how long a boot under TCG may take.
import { fileURLToPath } from "node:url";
import type { Lab } from "../../../../common/lab.ts";

export const realGuestsStateDir = fileURLToPath(
  new URL("../../../../../.lab/real-guests/emulator", import.meta.url),
);

/** A boot under TCG on a busy 2-core machine: about 1.5 minutes, ten at the very worst. */
export const bootMs = 600_000;

/** A lab's VM as the QEMU guests boot it: whatever the image says, it is the one Debian image. */
export const realGuestVm: Lab["vm"] = {
  cpu: 2,
  memory: "1Gi",
  image: "quay.io/containerdisks/debian:12",
  nested: false,
  cloudInit: null,
};

/** What a real-guest test timed, by name; printed at its end (the figures of docs/benchmarks.md). */
export class Measurements {
  private readonly figures: [string, string][] = [];

  constructor(private readonly heading: string) {}

  /** Records `what` as the seconds since `start` (Date.now() then). */
  since(what: string, start: number): void {
    this.add(what, `${((Date.now() - start) / 1000).toFixed(1)} s`);
  }

  add(what: string, value: string): void {
    this.figures.push([what, value]);
  }

  print(): void {
    console.log(`${this.heading}:\n${this.figures.map(([what, value]) => `  ${what}: ${value}`).join("\n")}`);
  }
}
