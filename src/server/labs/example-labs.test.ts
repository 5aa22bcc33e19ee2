// The example labs' checks, run the way the grading agent will: bash as a plain user in its home.
// Each must fail before the student did anything and pass after a reference solution.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Lab } from "../../common/lab.ts";
import { defaultVmSizes, loadLabs } from "./load-labs.ts";

const { labs } = loadLabs(new URL("../../../labs", import.meta.url).pathname, defaultVmSizes);

const solutions: Record<string, string> = {
  "linux-basics": `
    echo hello > ~/hello.txt
    mkdir ~/notes && touch ~/notes/secret.txt && chmod 600 ~/notes/secret.txt
    wc -l < /etc/passwd > ~/passwd-lines.txt
    mkdir ~/bin && printf '#!/bin/bash\\necho hi\\n' > ~/bin/greet && chmod +x ~/bin/greet`,
  "git-workflow": `
    git config --global user.name "Ana" && git config --global user.email ana@example.edu
    mkdir ~/project && cd ~/project && git init -q -b main
    echo "# Project" > README.md && git add README.md && git commit -qm "Add README"
    git switch -qc feature && echo more >> README.md && git commit -qam "Say more"
    git switch -q main && git merge -q feature`,
  "screen-basics": `
    echo tty1 > ~/screen-tty.txt
    echo Ctrl+Alt+F2 > ~/switch-keys.txt`,
  // Without qemu-img here, write the qcow2 magic the way qemu-img would start the file.
  "nested-kvm": `
    echo vmx > ~/virt-flag.txt
    echo /dev/kvm > ~/kvm-device.txt
    printf 'QFI\\xfb\\0\\0\\0\\3' > ~/inner.qcow2
    printf '#!/bin/sh\\nexec qemu-system-x86_64 -accel kvm -m 512 -drive file="$HOME/inner.qcow2"\\n' > ~/run-inner.sh
    chmod +x ~/run-inner.sh`,
};

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function runInHome(home: string, command: string, timeoutSeconds: number): number | null {
  const env = { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C", GIT_CONFIG_NOSYSTEM: "1" };
  return spawnSync("bash", ["-c", command], {
    cwd: home,
    env,
    timeout: timeoutSeconds * 1000,
    stdio: "ignore",
  }).status;
}

function passedChecks(lab: Lab, home: string): string[] {
  return lab.checks
    .filter((check) => runInHome(home, check.run, check.timeoutSeconds) === 0)
    .map((check) => check.id);
}

describe("example lab checks", () => {
  it("have a reference solution for every example lab", () => {
    expect(labs.map((lab) => lab.id).sort()).toEqual(Object.keys(solutions).sort());
  });

  it.each(labs.map((lab) => [lab.id, lab] as const))(
    "%s: all fail in a fresh home, all pass once solved",
    (id, lab) => {
      const home = mkdtempSync(join(tmpdir(), "student-home-"));
      homes.push(home);
      expect(passedChecks(lab, home)).toEqual([]);
      expect(runInHome(home, `set -e\n${solutions[id] ?? "false"}`, 30)).toBe(0);
      expect(passedChecks(lab, home)).toEqual(lab.checks.map((check) => check.id));
    },
  );
});
