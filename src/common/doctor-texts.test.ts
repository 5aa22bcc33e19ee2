import { describe, expect, it } from "vitest";
import { renderDoctorText, say } from "./doctor-texts.ts";

/** Another language's words for three keys, as the SPA's catalogs give them. */
const japanese = (key: string) =>
  ({
    imageVolumeKubeVirtGate: "KubeVirt {{version}}: ImageVolume は{{state}}です。理由: {{because}}。",
    off: "オフ",
    becauseInDisabledFeatureGates:
      "spec.configuration.developerConfiguration.disabledFeatureGates に記載されているため",
  })[key];

describe("a doctor's sentence", () => {
  it("is said in English with its params, a clause inside it said too", () => {
    const gate = say("imageVolumeKubeVirtGate", {
      version: "v1.9.0",
      state: say("off"),
      because: say("becauseInDisabledFeatureGates"),
    });
    expect(renderDoctorText(gate)).toBe(
      "KubeVirt v1.9.0: ImageVolume is off because it is listed in spec.configuration.developerConfiguration.disabledFeatureGates.",
    );
    expect(renderDoctorText(gate, japanese)).toBe(
      "KubeVirt v1.9.0: ImageVolume はオフです。理由: spec.configuration.developerConfiguration.disabledFeatureGates に記載されているため。",
    );
  });

  it("says a list param one sentence a line, and a key it does not know in English", () => {
    const fix = say("imageVolumeUpgradeFix", {
      disable: [say("disableRemoveExplicit", { namespace: "kubevirt", name: "kv" }), say("kvmTitle")],
    });
    expect(renderDoctorText(fix, () => undefined)).toBe(
      "Upgrade containerd on those nodes, or: Remove ImageVolume from spec.configuration.developerConfiguration.featureGates: `kubectl -n kubevirt edit kubevirt kv`.\nNodes with KVM",
    );
  });
});
