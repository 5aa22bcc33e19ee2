// The doctor's checks of KubeVirt settings that change what a lab VM costs or shows rather than
// whether it starts: the CPU allocation ratio (what a VM asks of its node) and the serial console log.
import { say } from "../../common/doctor-texts.ts";
import {
  consoleLogSidecar,
  defaultCpuAllocationRatio,
  launcherPodRequest,
} from "../capacity/launcher-resources.ts";
import { result, type Check } from "./check-verdict.ts";

export const cpuAllocationRatioCheck: Check = ({ kubeVirt }) => {
  const title = say("cpuRatioTitle");
  const cr = kubeVirt.ok ? kubeVirt.value : undefined;
  if (!cr) return result("cpu-allocation-ratio", title, "warn", say("kubeVirtResourceUnknown"));
  const configured = cr.spec?.configuration?.developerConfiguration?.cpuAllocationRatio;
  const ratio = typeof configured === "number" && configured > 0 ? configured : defaultCpuAllocationRatio;
  const example = launcherPodRequest({ vcpus: 2, memoryBytes: 4 * 2 ** 30 }, { cpuAllocationRatio: ratio });
  return result(
    "cpu-allocation-ratio",
    title,
    "ok",
    say(configured === undefined ? "cpuRatioDefault" : "cpuRatio", {
      ratio,
      millis: Math.ceil(1000 / ratio),
    }),
    [
      say("cpuRatioExample", {
        cpu: example.cpuMillis - consoleLogSidecar.cpuMillis,
        memory: Math.round((example.memoryBytes - consoleLogSidecar.memoryBytes) / 2 ** 20),
      }),
    ],
  );
};

export const serialConsoleLogCheck: Check = ({ kubeVirt }) => {
  const title = say("serialLogTitle");
  const cr = kubeVirt.ok ? kubeVirt.value : undefined;
  if (!cr) return result("serial-console-log", title, "warn", say("kubeVirtResourceUnknown"));
  const disabled = cr.spec?.configuration?.virtualMachineOptions?.disableSerialConsoleLog !== undefined;
  return result("serial-console-log", title, "ok", say(disabled ? "serialLogOff" : "serialLogOn"), [
    say("serialLogWhy"),
  ]);
};
