// A Lab Console and a test LMS that know each other, as an LMS administrator and LTI_PLATFORMS_FILE
// would set them up: shared by the launch, grades and deep-linking tests.
import type { Platform } from "../model/model.ts";
import { roles, startTestPlatform, type TestPlatform } from "./test-platform.ts";

export const testClientId = "lab-console-test";
export const testDeploymentId = "deployment-1";

/** The platform as the console's configuration names it. */
export function configuredPlatform(platform: TestPlatform, id = "test-lms"): Platform {
  return {
    id,
    name: "Test LMS",
    issuer: platform.issuer,
    clientId: testClientId,
    authLoginUrl: new URL(platform.authUrl),
    tokenUrl: new URL(platform.tokenUrl),
    tokenAudience: undefined,
    jwksUrl: new URL(platform.jwksUrl),
    deploymentIds: [testDeploymentId],
    emailDomains: ["example.edu"],
    status: "active",
    source: "config",
  };
}

/** A test LMS with the console registered as a tool, one course, an instructor, a TA and two students. */
export async function startCoursePlatform(consoleUrl: string, labId: string): Promise<TestPlatform> {
  const platform = await startTestPlatform({
    tool: {
      clientId: testClientId,
      loginUrl: `${consoleUrl}/api/lti/login`,
      redirectUris: [`${consoleUrl}/api/lti/launch`],
      jwksUrl: `${consoleUrl}/api/lti/jwks`,
      deploymentId: testDeploymentId,
      targetLinkUri: `${consoleUrl}/api/lti/launch`,
      deepLinkingUrl: `${consoleUrl}/api/lti/launch`,
    },
  });
  platform.addCourse({ id: "cs101", title: "CS 101: Systems" });
  platform.addUser({
    sub: "u-ines",
    name: "Ines Instructor",
    email: "Ines@Example.edu",
    roles: [roles.instructor],
  });
  platform.addUser({ sub: "u-tomas", name: "Tomas TA", email: "tomas@example.edu" });
  platform.addUser({ sub: "u-stella", name: "Stella Student", email: "stella@example.edu" });
  platform.addUser({ sub: "u-otto", name: "Otto", email: "otto@example.edu" });
  platform.enrol("cs101", "u-ines", [roles.instructor]);
  platform.enrol("cs101", "u-tomas", [roles.teachingAssistant], ["Section B"]);
  platform.enrol("cs101", "u-stella", [roles.learner], ["Section A"]);
  platform.enrol("cs101", "u-otto", [roles.learner], ["Section B"]);
  platform.addResourceLink("cs101", { id: "link-lab", title: "Lab 1", custom: { lab: labId } });
  return platform;
}
