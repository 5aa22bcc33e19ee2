// The doctor's check of what this console saw of its warm VMs (classes/warm-patch-refusals.ts): a
// patch refused by anything but a lost race, usually an admission webhook that refuses label changes
// on VirtualMachines. Only the console's own page can tell: `npm run doctor` is another process.
import type { DoctorCheck } from "../../common/operations-api.ts";
import type { WarmPatchRefusalSummary } from "../classes/warm-patch-refusals.ts";

export function warmPatchCheck(refusals: WarmPatchRefusalSummary): DoctorCheck {
  const base = { id: "warm-patches", title: "Warm VMs can be claimed", fix: null, details: [] };
  const { count, last } = refusals;
  if (count === 0 || !last) {
    return { ...base, status: "ok", summary: "The cluster refused no claim or ready mark of a warm VM." };
  }
  const what = last.patch === "claim" ? "a launch's claim of" : "the ready mark on";
  return {
    ...base,
    status: "fail",
    summary: `The cluster refused ${count} patch${count === 1 ? "" : "es"} on warm VMs since this console started: launches started their VMs cold instead.`,
    details: [
      `Last, at ${last.at}: ${what} ${last.vm}: ${last.message}`,
      "Claims and ready marks only change a VM's labels and annotations; each is also counted in " +
        "/metrics as lab_console_warm_patch_refusals_total.",
    ],
    fix:
      "Find what refuses metadata changes on VirtualMachines in the session namespace: usually an " +
      "admission webhook (the message names it). `kubectl patch vm NAME --type=json -p " +
      '\'[{"op":"add","path":"/metadata/labels/probe","value":"x"}]\'` shows the same answer.',
  };
}
