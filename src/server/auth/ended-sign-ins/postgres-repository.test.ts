// The ended sign-ins contract on a real PostgreSQL, what PostgreSQL adds (writes from several
// replicas that commit out of order), and SignIns over it as replicas use it.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseUnavailableError } from "../../db/errors.ts";
import { startStallingProxy } from "../../db/postgres/testing/stalling-proxy.ts";
import {
  createTestSchema,
  failCommitsWriting,
  repositoryInFreshSchema,
  startTestPostgres,
  type TestPostgres,
} from "../../db/postgres/testing/test-postgres.ts";
import { eventually } from "../../../common/testing/patience.ts";
import { SignIns } from "../sign-ins.ts";
import { PostgresEndedSignInRepository } from "./postgres-repository.ts";
import {
  aCutOff,
  anEndedSignIn,
  describeEndedSignInRepositoryContract,
} from "./testing/repository-contract.ts";

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.close());

describeEndedSignInRepositoryContract("PostgreSQL", () =>
  repositoryInFreshSchema(server, (url) => PostgresEndedSignInRepository.open(url)),
);

describe("the PostgreSQL ended sign-ins table", () => {
  it("still returns a sign-out whose write committed after a later one was read", async () => {
    const schema = await createTestSchema(server);
    const repository = await PostgresEndedSignInRepository.open(schema.url);
    // Another replica's insert: its seq is taken now, its row shows only at COMMIT.
    const slowReplica = new pg.Client({ connectionString: schema.url });
    await slowReplica.connect();
    try {
      const slow = anEndedSignIn();
      const quick = anEndedSignIn();
      await slowReplica.query("BEGIN");
      await slowReplica.query("INSERT INTO ended_sign_ins (id, expires_at) VALUES ($1, $2)", [
        slow.id,
        new Date(slow.expiresAt),
      ]);
      await repository.record(quick);
      const first = await repository.endedSince(0);
      expect(first.endedSignIns).toEqual([quick]);

      await slowReplica.query("COMMIT");
      const next = await repository.endedSince(first.position);
      expect(next.endedSignIns).toContainEqual(slow);
    } finally {
      await slowReplica.end();
      await repository.close();
      await schema.drop();
    }
  });
});

describe("the PostgreSQL ended sign-ins table when PostgreSQL cannot commit", () => {
  it("answers database_unavailable for every write, and stores none of them", async () => {
    const schema = await createTestSchema(server);
    const repository = await PostgresEndedSignInRepository.open(schema.url);
    try {
      const before = anEndedSignIn();
      await repository.record(before);
      await repository.record(anEndedSignIn({ expiresAt: Date.UTC(2020, 0, 1) }));
      for (const table of ["ended_sign_ins", "sign_in_cut_offs"]) await failCommitsWriting(schema.url, table);
      const full = { code: "database_unavailable", message: expect.stringMatching(/is full\./) };
      await expect(repository.record(anEndedSignIn())).rejects.toMatchObject(full);
      await expect(repository.recordCutOff(aCutOff())).rejects.toMatchObject(full);
      await expect(repository.purgeExpired(Date.UTC(2025, 0, 1))).rejects.toMatchObject(full);
      expect((await repository.endedSince(0)).endedSignIns).toHaveLength(2);
      expect((await repository.endedSince(0)).endedSignIns).toContainEqual(before);
      expect(await repository.cutOffs(Date.UTC(2025, 0, 1))).toEqual([]);
    } finally {
      await repository.close();
      await schema.drop();
    }
  });
});

describe("SignIns over PostgreSQL", () => {
  it("refuses on every replica a sign-out made on one, within a poll", async () => {
    const schema = await createTestSchema(server);
    const stores = await Promise.all([1, 2].map(() => PostgresEndedSignInRepository.open(schema.url)));
    const [a, b] = await Promise.all(stores.map((store) => SignIns.open({ store, pollIntervalMs: 20 })));
    try {
      const signIn = a!.create({ username: "alice", role: "student", sections: [] });
      expect(b!.accept(signIn)).toBeDefined();
      await a!.end(signIn);
      await eventually(
        async () => b!.accept(signIn),
        (accepted) => accepted === undefined,
        {
          what: "the other replica to refuse the sign-out",
        },
      );
    } finally {
      await Promise.all([a?.close(), b?.close()]);
      await Promise.all(stores.map((store) => store.close()));
      await schema.drop();
    }
  });

  it("keeps polling, and closes, when the network to the database goes silent", async () => {
    const schema = await createTestSchema(server);
    const proxy = await startStallingProxy(schema.url);
    const store = await PostgresEndedSignInRepository.open(proxy.url, {
      queryTimeoutMs: 300,
      connectTimeoutMs: 300,
    });
    const warnings: string[] = [];
    const sessions = await SignIns.open({
      store,
      pollIntervalMs: 20,
      log: { info: () => undefined, warn: (message) => warnings.push(message) },
    });
    try {
      proxy.stall();
      await eventually(
        async () => warnings,
        (seen) => seen.some((message) => /stopped answering in the middle of a request/.test(message)),
        { what: "the poll to report the silent database" },
      );
      const signIn = sessions.create({ username: "alice", role: "student", sections: [] });
      // Signing out still answers within its second, and holds here.
      await sessions.end(signIn);
      expect(sessions.accept(signIn)).toBeUndefined();
      await sessions.close();
    } finally {
      await sessions.close();
      await store.close();
      await proxy.close();
      await schema.drop();
    }
  });

  it("does not start while the sign-outs cannot be read", async () => {
    const schema = await createTestSchema(server);
    const store = await PostgresEndedSignInRepository.open(schema.url, { lockTimeoutMs: 100 });
    const other = new pg.Client({ connectionString: schema.url });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("LOCK TABLE ended_sign_ins IN ACCESS EXCLUSIVE MODE");
      const error = await SignIns.open({ store }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect((error as Error).message).toMatch(/is locked by another program/);
    } finally {
      await other.end();
      await store.close();
      await schema.drop();
    }
  });
});
