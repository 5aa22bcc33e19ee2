// A path in the student's home as a person types it ("notes/lab1.txt"), checked before the VM is
// asked: relative, no "..", not too long. The agent checks the same and more (links that leave the
// home), as the student: this only gives the common mistakes a quick, plain answer.
import { fileLimits } from "../../common/files-api.ts";
import { HttpError } from "../http/errors.ts";

export function checkFilePath(path: unknown): string {
  if (typeof path !== "string" || path.length === 0 || path.length > fileLimits.pathLength) {
    throw invalidPath(`Name a file in the home folder: a path of 1 to ${fileLimits.pathLength} characters.`);
  }
  if (path.includes("\0")) throw invalidPath("The path holds a NUL character.");
  if (path.startsWith("/") || path.startsWith("~")) {
    throw invalidPath(`The path "${path}" must be relative to the home folder, such as notes/lab1.txt.`);
  }
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) throw invalidPath(`The path "${path}" leaves the home folder ("..").`);
  if (parts.length === 0) throw invalidPath(`The path "${path}" names no file.`);
  return parts.join("/");
}

/** The name a browser saves a download under. */
export function fileNameOf(path: string): string {
  return path.split("/").at(-1) ?? path;
}

function invalidPath(message: string): HttpError {
  return new HttpError(400, "invalid_path", message, "invalid_path");
}
