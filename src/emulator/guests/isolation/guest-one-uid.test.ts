// Without root the emulator gives a guest one uid, which is both guest root and the student
// (docs/emulator.md). The boot contract must still work there: the agent's unit runs, binds port 899
// (the unshare backend opens ports below 1024 to that uid) and answers port-forward. The ordinary user
// has no cgroup of its own on this host, so a guest is refused until LAB_EMULATOR_UNLIMITED_GUESTS's
// acceptUnlimited lets it start, and then its process rlimit still stops a fork bomb. Run as an
// ordinary user in a process of its own, which needs root here to become one.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runsPrivileged } from "./sandbox.ts";
import { runAsOrdinaryUser } from "../testing/as-ordinary-user.ts";

const script = fileURLToPath(new URL("../testing/one-uid-guest.ts", import.meta.url));

describe.runIf(runsPrivileged())("a guest of an emulator run by an ordinary user", () => {
  it("is refused without cgroup limits unless accepted; then has one uid, the agent's unit binds port 899 and answers, and a fork bomb stops at the process rlimit", async () => {
    const result = (await runAsOrdinaryUser(script)) as Record<string, unknown>;
    console.log(`one uid, no cgroup: the bounded fork bomb forked ${String(result.forked)} processes`);
    expect(result).toEqual({
      refused: expect.stringContaining("LAB_EMULATOR_UNLIMITED_GUESTS=1"),
      forkBombHeld: true,
      forked: expect.any(Number),
      agent: "uid=1000 key=64\n",
      ids: ["1000", "1000"],
      // With one uid the student is guest root too: it may open low ports like the agent.
      studentBinds898: true,
      log: ["enable exited 0 ready-sent=yes"],
    });
  }, 30_000);
});
