// Lists the recordings in a folder and prints how many there are: run by the file storage's test
// as a process of its own under a small limit of open files.
import { FileRecordingStorage } from "../file-recording-storage.ts";

const [dir] = process.argv.slice(2);
if (!dir) throw new Error("usage: list-recordings.ts <recordings folder>");
console.log((await new FileRecordingStorage(dir).list({})).length);
