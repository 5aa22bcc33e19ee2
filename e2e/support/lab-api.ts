import { expect, type APIRequestContext } from "@playwright/test";
import * as z from "zod/mini";
import { LabSummary, Session, SessionList, csrfHeader } from "../../src/common/api.ts";
import { demoPassword, type DemoUser } from "./demo-users.ts";

const mutationHeaders = { [csrfHeader.name]: csrfHeader.value };

/** The BFF's JSON API as one signed-in person: how tests set up state without clicking through the UI. */
export class LabApi {
  constructor(
    readonly request: APIRequestContext,
    readonly username: DemoUser,
  ) {}

  async signIn(): Promise<void> {
    const response = await this.request.post("/api/auth/login", {
      data: { username: this.username, password: demoPassword },
      headers: mutationHeaders,
    });
    expect(response.status(), `sign-in as ${this.username}`).toBe(200);
  }

  async labs(): Promise<LabSummary[]> {
    const response = await this.request.get("/api/labs");
    expect(response.status()).toBe(200);
    return z.array(LabSummary).parse(await response.json());
  }

  /** One lab of the catalog: the example labs in labs/ that the tests rely on. */
  async lab(id: string): Promise<LabSummary> {
    const lab = (await this.labs()).find((each) => each.id === id);
    if (!lab) throw new Error(`labs/${id}.yaml is missing`);
    return lab;
  }

  async launch(labId: string): Promise<Session> {
    const response = await this.request.post("/api/sessions", { data: { labId }, headers: mutationHeaders });
    expect(response.status(), `launch ${labId} as ${this.username}: ${await response.text()}`).toBe(201);
    return Session.parse(await response.json());
  }

  /** Launches `labId` and waits until its VM runs. */
  async launchRunning(labId: string): Promise<Session> {
    const session = await this.launch(labId);
    await this.waitUntilRunning(session.id);
    return session;
  }

  async sessions(): Promise<Session[]> {
    const response = await this.request.get("/api/sessions?pageSize=1000");
    expect(response.status()).toBe(200);
    return SessionList.parse(await response.json()).items;
  }

  /** The HTTP status of reading one session, for checks that someone may not see it. */
  async sessionStatusCode(sessionId: string): Promise<number> {
    return (await this.request.get(`/api/sessions/${sessionId}`)).status();
  }

  async waitUntilRunning(sessionId: string): Promise<void> {
    await expect
      .poll(async () => (await this.sessions()).find((session) => session.id === sessionId)?.status, {
        message: `session ${sessionId} reaches running`,
      })
      .toBe("running");
  }

  /** Raises a hand on the student's own session ("Ask for help"). */
  async raiseHand(sessionId: string, note = ""): Promise<void> {
    const response = await this.request.post(`/api/sessions/${sessionId}/help`, {
      data: { note },
      headers: mutationHeaders,
    });
    expect(response.status(), `raise a hand on ${sessionId}: ${await response.text()}`).toBe(200);
  }

  /** Ends every session this person has and waits until they are gone, so the next test starts clean. */
  async endAllSessions(): Promise<void> {
    for (const session of await this.sessions()) {
      if (session.status === "stopping") continue;
      const response = await this.request.delete(`/api/sessions/${session.id}`, { headers: mutationHeaders });
      expect([202, 404], `end ${session.id}`).toContain(response.status());
    }
    await expect
      .poll(async () => (await this.sessions()).length, {
        message: `${this.username}'s sessions are gone`,
      })
      .toBe(0);
  }
}
