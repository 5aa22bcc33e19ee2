// A class of students for tests that need more than the demo's three, signed in with password "demo".
// The hashes have scrypt's smallest cost, so hundreds of sign-ins take a moment, not a minute.
import { randomBytes, scryptSync } from "node:crypto";
import { createDemoAuthenticator, type PasswordAuthenticator } from "../auth/authenticator.ts";
import { demoPassword } from "../auth/users-file.ts";

/** The stored form hashPassword writes, at a cost a test can verify hundreds of times. */
export function cheapHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 32, { N: 16, r: 1, p: 1 });
  return ["scrypt", 16, 1, 1, salt.toString("base64"), key.toString("base64")].join("$");
}

/** `count` students s000, s001, ... and the instructor ivan. */
export async function manyStudents(
  count: number,
): Promise<{ students: string[]; authenticator: PasswordAuthenticator }> {
  const students = Array.from({ length: count }, (_, index) => `s${String(index).padStart(3, "0")}`);
  const passwordHash = cheapHash(demoPassword);
  const authenticator = await createDemoAuthenticator([
    ...students.map((username) => ({ username, role: "student" as const, sections: [], passwordHash })),
    { username: "ivan", role: "instructor", sections: [], passwordHash },
  ]);
  return { students, authenticator };
}
