// LTI 1.3 put together (docs/lti.md): the platforms, the tool's keys, the launch and its checks,
// deep linking, dynamic registration when the operator allows it, and the grades side (line items,
// the score outbox, rosters). buildApp calls it once when LTI is configured.
import type { FastifyInstance } from "fastify";
import type { Lab } from "../../common/lab.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import type { SignIns } from "../auth/sign-ins.ts";
import type { SignOutCookie } from "../auth/sign-out-cookie.ts";
import type { GradingRepository } from "../grading/repository.ts";
import { LaunchChecker } from "./launch/check-launch.ts";
import { registerDeepLinkingRoutes } from "./launch/deep-linking.ts";
import { createLtiGrades, type LtiGrades } from "./grades/lti-grades.ts";
import type { LtiGradesRepository } from "./grades/repository.ts";
import { registerLaunchRoutes } from "./launch/launch-routes.ts";
import type { LtiLaunchStore } from "./launch/store/repository.ts";
import type { Platform } from "./model/model.ts";
import { registerPageScripts } from "./launch/pages.ts";
import { registerPlatformRoutes } from "./launch/platform-routes.ts";
import { openPlatformDirectory } from "./launch/platforms.ts";
import { registerDynamicRegistrationRoute } from "./launch/registration.ts";
import { createToolKeyRing } from "./launch/tool-keys.ts";

/** How often expired states, tickets and nonces are cleared. */
const purgeEveryMs = 10 * 60_000;

export interface LtiSettings {
  /** From LTI_PLATFORMS_FILE. */
  platforms: Platform[];
  dynamicRegistration: boolean;
  publicUrl: URL;
  launchStore: LtiLaunchStore;
  gradesRepository: LtiGradesRepository;
  /** Tests shorten the outbox's waits. */
  grades?: Pick<Parameters<typeof createLtiGrades>[0], "backoff" | "outboxPollMs">;
}

export async function registerLti(
  app: FastifyInstance,
  settings: LtiSettings,
  deps: {
    signIns: SignIns;
    signOutCookie: SignOutCookie;
    audit: AuditLog;
    labs: Lab[];
    gradingRepository: GradingRepository;
    /** Seals the tool's private keys in the database. */
    secret: string;
    now: () => Date;
  },
): Promise<LtiGrades> {
  const store = settings.launchStore;
  const now = () => deps.now().getTime();
  const platforms = await openPlatformDirectory(settings.platforms, store);
  const keys = createToolKeyRing({ store, secret: deps.secret, now, log: app.log });
  const grades = createLtiGrades({
    repository: settings.gradesRepository,
    platforms,
    signer: keys,
    grading: deps.gradingRepository,
    labs: deps.labs,
    audit: deps.audit,
    now: deps.now,
    log: app.log,
    ...settings.grades,
  });
  const common = { store, platforms, audit: deps.audit, publicUrl: settings.publicUrl, now };
  await registerLaunchRoutes(app, {
    ...common,
    checker: new LaunchChecker({ platforms, store, now }),
    grades,
    signIns: deps.signIns,
    signOutCookie: deps.signOutCookie,
    labs: deps.labs,
  });
  registerDeepLinkingRoutes(app, { ...common, signer: keys, columns: grades, labs: deps.labs });
  registerPlatformRoutes(app, { platforms, store, keys, audit: deps.audit });
  registerPageScripts(app);
  if (settings.dynamicRegistration) registerDynamicRegistrationRoute(app, common);
  grades.register(app);

  const purge = setInterval(() => void store.purge(now()).catch(() => undefined), purgeEveryMs);
  purge.unref();
  app.addHook("onClose", async () => {
    clearInterval(purge);
    platforms.close();
    await grades.close();
  });
  return grades;
}
