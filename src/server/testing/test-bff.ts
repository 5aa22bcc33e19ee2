// The BFF against a real emulator on port 0 (fast timing), for integration tests and nothing else.
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { csrfHeader } from "../../common/api.ts";
import type { Lab } from "../../common/lab.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { buildApp } from "../app.ts";
import { createDemoAuthenticator } from "../auth/authenticator.ts";
import { LoginSessions } from "../auth/login-sessions.ts";
import { hashPassword } from "../auth/passwords.ts";
import { demoPassword, demoUsers } from "../auth/users-file.ts";
import type { SessionsReadMode } from "../config.ts";
import { createClusterClient, loadKubeConfig } from "../kube/client.ts";
import { KubeRequestCounter } from "../kube/request-counter.ts";
import { sessionsSelector } from "../sessions/labels.ts";

export const testNamespace = "lab-sessions";

export interface TestBff {
  url: string;
  app: FastifyInstance;
  emulator: TestEmulator;
  kubeRequests: KubeRequestCounter;
  loginSessions: LoginSessions;
  /** A browser signed in as one of the demo users. */
  signIn(username: string): Promise<TestBrowser>;
  close(): Promise<void>;
}

export async function startTestBff(options: {
  labs: Lab[];
  sessionsReadMode?: SessionsReadMode;
  /** Share a running emulator (it is then left running on close). */
  emulator?: TestEmulator;
}): Promise<TestBff> {
  const ownsEmulator = options.emulator === undefined;
  const emulator = options.emulator ?? (await startTestEmulator());
  const kubeRequests = new KubeRequestCounter();
  const cluster = createClusterClient(
    loadKubeConfig({ kind: "kubeconfig", path: emulator.emulator.kubeconfigPath }),
    {
      namespace: testNamespace,
      labelSelector: sessionsSelector,
      counter: kubeRequests,
    },
  );
  const passwordHash = await hashPassword(demoPassword);
  const loginSessions = new LoginSessions();
  const app = await buildApp({
    cluster,
    sessionsReadMode: options.sessionsReadMode ?? "cache",
    authenticator: await createDemoAuthenticator(demoUsers.map((user) => ({ ...user, passwordHash }))),
    loginSessions,
    cookieSecret: "a-test-secret-that-is-long-enough-to-sign",
    labs: options.labs,
    allowedOrigins: [],
    trustProxy: false,
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  let closed = false;
  return {
    url,
    app,
    emulator,
    kubeRequests,
    loginSessions,
    async signIn(username) {
      const browser = new TestBrowser(url);
      const answer = await browser.post("/api/auth/login", { username, password: demoPassword });
      if (answer.status !== 200) throw new Error(`sign-in as ${username} failed: ${answer.status}`);
      return browser;
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      if (ownsEmulator) await emulator.close().catch(() => undefined);
    },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or undefined when there was none. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary fields
}

/** Keeps the session cookie like a browser and sends the CSRF header on mutations like the SPA. */
export class TestBrowser {
  private cookie: string | undefined;

  constructor(readonly baseUrl: string) {}

  /** Another browser holding the same cookie, as a stolen copy would. */
  copy(): TestBrowser {
    const twin = new TestBrowser(this.baseUrl);
    twin.cookie = this.cookie;
    return twin;
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    return this.request("GET", path, undefined, headers);
  }

  post(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    return this.request("POST", path, body, { [csrfHeader.name]: csrfHeader.value, ...headers });
  }

  delete(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    return this.request("DELETE", path, undefined, { [csrfHeader.name]: csrfHeader.value, ...headers });
  }

  async request(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<Answer> {
    const response = await fetch(this.baseUrl + path, {
      method,
      headers: {
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = response.headers.getSetCookie().find((line) => line.startsWith("lab_session="));
    if (setCookie) {
      const pair = setCookie.split(";")[0] ?? "";
      this.cookie = pair === "lab_session=" ? undefined : pair;
    }
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }
}

/** Polls `read` until `accept` holds; the last value on success. */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  { timeoutMs = 10_000, what = "the condition" }: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await read();
  while (!accept(last)) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
    last = await read();
  }
  return last;
}
