// `npm run guest-image`: builds (or finds) the QEMU guests' image ahead of the first VMI, so that
// the emulator's first boot does not wait minutes for it, and prints where it is and how long it took.
import { parseArgs } from "node:util";
import { ensureGuestImage } from "./image.ts";

const { values } = parseArgs({ options: { "state-dir": { type: "string", default: ".lab/emulator" } } });
const started = Date.now();
try {
  const image = await ensureGuestImage(values["state-dir"], (line) => console.log(line));
  console.log(
    `guest image: ${image.dir} (kernel ${image.kernelRelease}), ready after ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
} catch (error) {
  console.error(`guest image: ${(error as Error).message}`);
  process.exit(1);
}
