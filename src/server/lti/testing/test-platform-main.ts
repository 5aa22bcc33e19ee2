// Starts the test platform on its own (manual trials, or a Playwright webServer) with a demo course, a
// teacher and two students, and prints its URLs. `tsx src/server/lti/testing/test-platform-main.ts`
// Env: LTI_PLATFORM_PORT (default 0), and to register a tool at once LTI_TOOL_CLIENT_ID, LTI_TOOL_LOGIN_URL,
// LTI_TOOL_REDIRECT_URIS (comma-separated), LTI_TOOL_JWKS_URL, LTI_TOOL_DEPLOYMENT_ID;
// LTI_TOOL_REGISTRATION_URL prints a dynamic registration start URL for that tool.
import { roles, startTestPlatform } from "./test-platform.ts";

const env = process.env;
const tool = env.LTI_TOOL_CLIENT_ID
  ? {
      clientId: env.LTI_TOOL_CLIENT_ID,
      loginUrl: env.LTI_TOOL_LOGIN_URL ?? "",
      redirectUris: (env.LTI_TOOL_REDIRECT_URIS ?? "").split(",").filter(Boolean),
      jwksUrl: env.LTI_TOOL_JWKS_URL ?? "",
      deploymentId: env.LTI_TOOL_DEPLOYMENT_ID ?? "1",
    }
  : undefined;

const platform = await startTestPlatform({ port: Number(env.LTI_PLATFORM_PORT ?? 0), tool });
platform.addCourse({ id: "demo", title: "Demo course" });
platform.addUser({ sub: "teacher", name: "Tess Teacher", email: "teacher@school.test" });
platform.enrol("demo", "teacher", [roles.instructor]);
for (const n of [1, 2]) {
  platform.addUser({ sub: `student${n}`, name: `Student ${n}`, email: `student${n}@school.test` });
  platform.enrol("demo", `student${n}`, [roles.learner], [`Section ${n}`]);
}

console.log(`test LMS at ${platform.url}`);
console.log(`  teacher's course page: ${platform.coursePageUrl("teacher", "demo")}`);
console.log(`  gradebook: ${platform.gradebookUrl("demo")}`);
if (env.LTI_TOOL_REGISTRATION_URL)
  console.log(`  dynamic registration: ${platform.registrationStartUrl(env.LTI_TOOL_REGISTRATION_URL)}`);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void platform.close());
