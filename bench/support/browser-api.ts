// The BFF's JSON API as a bench's simulated browsers use it: a sign-in cookie, the CSRF header on writes.
import { csrfHeader } from "../../src/common/api.ts";

export interface Person {
  username: string;
  cookie: string;
}

/** Signs in with a password; a 429 (a class signing in at once) waits as long as it says. */
export async function signIn(baseUrl: string, username: string, password: string): Promise<Person> {
  for (;;) {
    const response = await fetch(`${baseUrl}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", [csrfHeader.name]: csrfHeader.value },
      body: JSON.stringify({ username, password }),
    });
    await response.arrayBuffer();
    if (response.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get("retry-after")) * 1000));
      continue;
    }
    const cookie = response.headers.getSetCookie()[0]?.split(";")[0];
    if (response.status !== 200 || !cookie) throw new Error(`sign-in as ${username}: ${response.status}`);
    return { username, cookie };
  }
}

export async function api(
  baseUrl: string,
  person: Person,
  method: string,
  requestPath: string,
  body?: unknown,
): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(baseUrl + requestPath, {
    method,
    headers: {
      cookie: person.cookie,
      ...(body === undefined
        ? {}
        : { "content-type": "application/json", [csrfHeader.name]: csrfHeader.value }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, text: await response.text(), headers: response.headers };
}
