// Types into a VM's serial console through the cluster's console subresource, the way a student
// fixes a task, and waits until the command has run. For tests that change a guest from outside.
import { patient } from "../../../common/testing/patience.ts";
import { randomBytes } from "node:crypto";
import type { KubeConfig } from "@kubernetes/client-node";
import { openVmiWebSocket } from "../../kube/vmi-websocket.ts";

/** Runs `command` in the console's shell; resolves with what the console printed meanwhile. */
export async function runInConsole(
  target: { kubeConfig: KubeConfig; namespace: string; vmiName: string },
  command: string,
  timeoutMs = 10_000,
): Promise<string> {
  const signal = AbortSignal.timeout(patient(timeoutMs));
  const socket = await openVmiWebSocket({ ...target, subresource: "console", signal });
  // The shell prints the marker with 6*7 worked out, so the echo of the typed line never matches it.
  const nonce = randomBytes(4).toString("hex");
  const marker = `done-42-${nonce}`;
  let output = "";
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = () =>
        reject(
          new Error(`the console did not run ${JSON.stringify(command)} in time; it printed: ${output}`),
        );
      signal.addEventListener("abort", fail, { once: true });
      socket.on("close", () => reject(new Error(`the console closed; it printed: ${output}`)));
      socket.on("message", (data: Buffer) => {
        output += data.toString("utf8");
        if (output.includes(marker)) {
          signal.removeEventListener("abort", fail);
          resolve();
        }
      });
      socket.send(Buffer.from(`${command}; echo done-$((6*7))-${nonce}\r`), { binary: true });
    });
  } finally {
    socket.close();
  }
  return output;
}
