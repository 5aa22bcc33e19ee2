// The NoCloud seed virt-launcher gives a VMI with a cloudInitNoCloud volume: an ISO 9660 disk labelled
// "cidata" with user-data and meta-data (instance-id, local-hostname), which cloud-init finds by its
// label. The instance-id is the VMI's uid, so a new VMI of the same VM is a new instance to cloud-init.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { findTool, run } from "./host-tools.ts";

export interface SeedInput {
  instanceId: string;
  hostname: string;
  /** Without user data cloud-init still runs, with an empty #cloud-config. */
  userData: string | undefined;
}

export async function writeNoCloudSeed(dir: string, input: SeedInput): Promise<string> {
  const files = join(dir, "seed");
  await mkdir(files, { recursive: true });
  await writeFile(join(files, "user-data"), input.userData ?? "#cloud-config\n");
  await writeFile(
    join(files, "meta-data"),
    `instance-id: ${input.instanceId}\nlocal-hostname: ${input.hostname}\n`,
  );
  const iso = join(dir, "seed.iso");
  await run(findTool("xorriso")!, [
    "-as",
    "mkisofs",
    "-quiet",
    "-output",
    iso,
    "-volid",
    "cidata",
    "-joliet",
    "-rock",
    join(files, "user-data"),
    join(files, "meta-data"),
  ]);
  return iso;
}
