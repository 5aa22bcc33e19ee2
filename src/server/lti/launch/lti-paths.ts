// Where an LMS sends its logins and launches: the launch routes serve them, and registration and
// deep linking tell the platform about them.
export const ltiLaunchPath = "/api/lti/launch";
export const ltiLoginPath = "/api/lti/login";
