// Runs a program to its end with only the given environment; resolves with its stdout, or rejects
// with its exit code and everything it printed.
import { spawn } from "node:child_process";

export function runProgram(file: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${file} exited with ${code}: ${stderr}\n${stdout}`)),
    );
  });
}
