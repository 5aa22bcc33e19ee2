// The LMSs this console trusts for launches: the ones in LTI_PLATFORMS_FILE, read at start-up, and
// the ones LMSs registered themselves (dynamic registration), read from the launch store. Lookups are
// synchronous from memory; the stored ones are read again every few seconds, so an approval on one
// replica reaches the others soon.
import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { secureUrl } from "../../http/secure-url.ts";
import type { LtiLaunchStore, StoredPlatform } from "./store/repository.ts";
import type { Platform, PlatformDirectory } from "../model/model.ts";

export const platformIdPattern = /^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/;

const ConfiguredPlatform = z.object({
  id: z.string().regex(platformIdPattern, "lower-case letters, digits and dashes, at most 40"),
  name: z.string().min(1).max(100),
  issuer: z.string().min(1),
  clientId: z.string().min(1),
  authLoginUrl: secureUrl(),
  tokenUrl: secureUrl(),
  tokenAudience: z.string().optional(),
  jwksUrl: secureUrl(),
  deploymentIds: z.array(z.string().min(1)).min(1),
  emailDomains: z
    .array(z.string().regex(/^[a-z0-9.-]+\.[a-z]{2,}$/i, "a domain like example.edu"))
    .default([]),
});

const PlatformsFile = z.object({ platforms: z.array(ConfiguredPlatform) }).superRefine((file, context) => {
  const seen = new Set<string>();
  for (const platform of file.platforms) {
    for (const key of [
      `id ${platform.id}`,
      `issuer ${platform.issuer} with client id ${platform.clientId}`,
    ]) {
      if (seen.has(key)) context.addIssue({ code: "custom", message: `two platforms have the ${key}` });
      seen.add(key);
    }
  }
});

/** The platforms of LTI_PLATFORMS_FILE; every problem in one message. */
export async function readPlatformsFile(file: string): Promise<Platform[]> {
  let parsed: unknown;
  try {
    parsed = parseYaml(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`LTI_PLATFORMS_FILE ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const result = PlatformsFile.safeParse(parsed);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `${issue.path.join(".") || "(file)"}: ${issue.message}`,
    );
    throw new Error(`LTI_PLATFORMS_FILE ${file}:\n  - ${problems.join("\n  - ")}`);
  }
  return result.data.platforms.map((platform) => ({
    ...platform,
    tokenAudience: platform.tokenAudience,
    status: "active",
    source: "config",
  }));
}

export function platformOfStored(stored: StoredPlatform): Platform {
  return {
    id: stored.id,
    name: stored.name,
    issuer: stored.issuer,
    clientId: stored.clientId,
    authLoginUrl: new URL(stored.authLoginUrl),
    tokenUrl: new URL(stored.tokenUrl),
    tokenAudience: undefined,
    jwksUrl: new URL(stored.jwksUrl),
    deploymentIds: stored.deploymentIds,
    // A platform that registered itself speaks for nobody's email: its people are named by their ids.
    emailDomains: [],
    status: stored.status,
    source: "dynamic",
  };
}

const reloadMs = 5_000;

export interface LivePlatformDirectory extends PlatformDirectory {
  /** Reads the registered platforms again now (after a registration or an approval, or a miss). */
  reload(): Promise<void>;
  close(): void;
}

export async function openPlatformDirectory(
  configured: Platform[],
  store: LtiLaunchStore,
): Promise<LivePlatformDirectory> {
  let registered: Platform[] = [];
  const all = () => [...configured, ...registered];
  async function reload(): Promise<void> {
    const stored = (await store.platforms()).map(platformOfStored);
    // A configured platform wins over a registration of the same issuer and client.
    registered = stored.filter(
      (platform) =>
        !configured.some((each) => each.issuer === platform.issuer && each.clientId === platform.clientId),
    );
  }
  await reload();
  const timer = setInterval(() => void reload().catch(() => undefined), reloadMs);
  timer.unref();
  return {
    get: (id) => all().find((platform) => platform.id === id),
    withIssuer: (issuer) => all().filter((platform) => platform.issuer === issuer),
    list: all,
    reload,
    close: () => clearInterval(timer),
  };
}
