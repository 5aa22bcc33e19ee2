// The VM namespace check's verdict for each Pod Security level.
import { describe, expect, it } from "vitest";
import { readings } from "./testing/cluster-readings.ts";
import { vmNamespaceCheck } from "./vm-namespace-check.ts";

describe("the VM namespace check", () => {
  it("fails a namespace that enforces a stricter Pod Security level, and warns when none is set", () => {
    const labelled = (level: string | undefined) =>
      vmNamespaceCheck(
        readings({
          namespace: {
            ok: true,
            value: {
              metadata: {
                name: "lab-sessions",
                labels: level ? { "pod-security.kubernetes.io/enforce": level } : {},
              },
            },
          },
        }),
      );
    expect(labelled("privileged").status).toBe("ok");
    expect(labelled("baseline")).toMatchObject({
      status: "fail",
      fix: "kubectl label namespace lab-sessions pod-security.kubernetes.io/enforce=privileged --overwrite",
    });
    expect(labelled(undefined).status).toBe("warn");
    expect(vmNamespaceCheck(readings({ namespace: { ok: true, value: undefined } })).status).toBe("fail");
  });
});
