// Password hashes in a self-describing string, so the cost can rise later without breaking old entries.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

const keyLength = 32;
const defaultCost: Required<Pick<ScryptOptions, "N" | "r" | "p">> = { N: 16384, r: 8, p: 1 };

function derive(password: string, salt: Buffer, cost: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keyLength, cost, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `scrypt$N$r$p$<salt base64>$<key base64>` */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, defaultCost);
  const { N, r, p } = defaultCost;
  return ["scrypt", N, r, p, salt.toString("base64"), key.toString("base64")].join("$");
}

export function isPasswordHash(text: string): boolean {
  return /^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/.test(text);
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, key] = stored.split("$");
  if (scheme !== "scrypt" || !N || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, "base64");
  const actual = await derive(password, Buffer.from(salt, "base64"), {
    N: Number(N),
    r: Number(r),
    p: Number(p),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
