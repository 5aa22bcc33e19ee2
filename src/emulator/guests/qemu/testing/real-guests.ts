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
