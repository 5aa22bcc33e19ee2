// The demo users: a JSON file of names, roles, sections and password hashes. When the file is missing
// it is created with the documented demo accounts, so a fresh checkout can sign in at once and shows
// sections at work (tara, a TA of no section, is one of the whole course).
import { readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { Role, sectionPattern, type Me } from "../../common/api.ts";
import { hashPassword, isPasswordHash } from "./passwords.ts";

export const demoPassword = "demo";
export const demoUsers: Me[] = [
  { username: "alice", role: "student", sections: ["a"] },
  { username: "bob", role: "student", sections: ["a"] },
  { username: "carol", role: "student", sections: ["b"] },
  { username: "tara", role: "ta", sections: [] },
  { username: "tom", role: "ta", sections: ["b"] },
  { username: "ivan", role: "instructor", sections: [] },
];

const sectionRules =
  "must be a section name: lower-case letters, digits, '.', '_' or '-', starting and ending with a letter or digit, at most 63";

const UserRecord = z.object({
  username: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "must be lower-case letters, digits, '.', '_' or '-'"),
  role: Role,
  /** A student's section (the first counts), a TA's sections; none: a TA of the whole course. */
  sections: z
    .array(z.string().regex(sectionPattern, sectionRules))
    .default([])
    .refine((names) => new Set(names).size === names.length, "lists a section twice"),
  passwordHash: z.string().refine(isPasswordHash, "must be a scrypt hash (scrypt$N$r$p$salt$key)"),
});
export type UserRecord = z.infer<typeof UserRecord>;

const UsersFile = z.object({ users: z.array(UserRecord) });

export class UsersFileError extends Error {}

/** The users file, created with the demo users when missing. */
export async function loadUsers(file: string): Promise<UserRecord[]> {
  try {
    return await readUsers(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return writeDemoUsers(file);
  }
}

/** The users file as it is; rejects when it is missing (ENOENT) or not valid (UsersFileError). */
export async function readUsers(file: string): Promise<UserRecord[]> {
  const text = await readFile(file, "utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsersFileError(`${file}: not valid JSON`);
  }
  const parsed = UsersFile.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  - ${issue.path.join(".")}: ${issue.message}`);
    throw new UsersFileError(`${file}:\n${problems.join("\n")}`);
  }
  const names = parsed.data.users.map((user) => user.username);
  const repeated = names.filter((name, index) => names.indexOf(name) !== index);
  if (repeated.length > 0) throw new UsersFileError(`${file}: users listed twice: ${repeated.join(", ")}`);
  return parsed.data.users;
}

async function writeDemoUsers(file: string): Promise<UserRecord[]> {
  const users = await Promise.all(
    demoUsers.map(async (user) => ({ ...user, passwordHash: await hashPassword(demoPassword) })),
  );
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ users }, null, 2) + "\n", { mode: 0o600 });
  return users;
}
