// Writes docs/lab.schema.json, the JSON Schema of lab files, from the zod schema in src/common/lab.ts.
// Editors use it (see the yaml-language-server line atop labs/*.yaml); a test keeps it current.
// Run: npm run schema:labs
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { z } from "zod";
import { LabFile } from "../src/common/lab.ts";

export const labSchemaPath = fileURLToPath(new URL("../docs/lab.schema.json", import.meta.url));

/** The schema file's exact text, formatted as prettier would leave it. */
export async function renderLabSchema(): Promise<string> {
  // io "input": fields with defaults are optional in the file, which is what an editor should say.
  const schema = z.toJSONSchema(LabFile, { io: "input", target: "draft-2020-12" });
  const json = JSON.stringify({ $id: "https://labconsole.dev/lab.schema.json", ...schema }, null, 2);
  return format(json, { ...(await resolveConfig(labSchemaPath)), filepath: labSchemaPath });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(labSchemaPath, await renderLabSchema());
  console.log(`wrote ${labSchemaPath}`);
}
