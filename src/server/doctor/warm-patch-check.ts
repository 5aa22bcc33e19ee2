// The doctor's check of what this console saw of its warm VMs (classes/warm-patch-refusals.ts): a
// patch refused by anything but a lost race, usually an admission webhook that refuses label changes
// on VirtualMachines. Only the console's own page can tell: `npm run doctor` is another process.
import { say } from "../../common/doctor-texts.ts";
import type { DoctorCheck } from "../../common/operations-api.ts";
import type { WarmPatchRefusalSummary } from "../classes/warm-patch-refusals.ts";
import { result } from "./check-verdict.ts";

export function warmPatchCheck(refusals: WarmPatchRefusalSummary): DoctorCheck {
  const title = say("warmPatchesTitle");
  const { count, last } = refusals;
  if (count === 0 || !last) return result("warm-patches", title, "ok", say("warmPatchesOk"));
  return result(
    "warm-patches",
    title,
    "fail",
    count === 1 ? say("warmPatchesRefusedOne") : say("warmPatchesRefused", { refused: count }),
    [
      say(last.patch === "claim" ? "warmPatchLastClaim" : "warmPatchLastReadyMark", {
        at: last.at,
        vm: last.vm,
        message: last.message,
      }),
      say("warmPatchesCounted"),
    ],
    [
      say("warmPatchesFix", {
        command: `kubectl patch vm NAME --type=json -p '[{"op":"add","path":"/metadata/labels/probe","value":"x"}]'`,
      }),
    ],
  );
}
