// A Python zip application: the files of a program folder in one zip that `python3 file.pyz` runs
// (its __main__.py first), as the standard library's zipapp module writes one. Entries are stored,
// not deflated: the zip travels gzipped as a whole, which packs it better than each file alone.
// A fixed timestamp and order make the same files give the same bytes.
import { crc32 } from "node:zlib";

export interface ZipEntry {
  name: string;
  data: Buffer;
}

// MS-DOS date of 1980-01-01, the earliest a zip can hold, at 00:00.
const dosDate = (1 << 5) | 1;
const dosTime = 0;
const version = 20;

function header(signature: number, fields: [bytes: 2 | 4, value: number][]): Buffer {
  const out = Buffer.alloc(4 + fields.reduce((sum, [bytes]) => sum + bytes, 0));
  out.writeUInt32LE(signature, 0);
  let at = 4;
  for (const [bytes, value] of fields) {
    if (bytes === 2) out.writeUInt16LE(value, at);
    else out.writeUInt32LE(value, at);
    at += bytes;
  }
  return out;
}

export function zipApplication(entries: ZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const nameBytes = Buffer.from(name, "utf8");
    const crc = crc32(data);
    // version needed, flags, method (0: stored), time, date, crc, sizes, name length, extra length
    const common: [2 | 4, number][] = [
      [2, 0],
      [2, 0],
      [2, dosTime],
      [2, dosDate],
      [4, crc],
      [4, data.length],
      [4, data.length],
      [2, nameBytes.length],
      [2, 0],
    ];
    const local = header(0x04034b50, [[2, version], ...common]);
    parts.push(local, nameBytes, data);
    // version made by, then the local fields, comment length, disk, internal and external attributes
    const central = header(0x02014b50, [
      [2, version],
      [2, version],
      ...common,
      [2, 0],
      [2, 0],
      [2, 0],
      [4, 0],
      [4, offset],
    ]);
    directory.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const directoryBytes = Buffer.concat(directory);
  const end = header(0x06054b50, [
    [2, 0],
    [2, 0],
    [2, entries.length],
    [2, entries.length],
    [4, directoryBytes.length],
    [4, offset],
    [2, 0],
  ]);
  return Buffer.concat([...parts, directoryBytes, end]);
}
