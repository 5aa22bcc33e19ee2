// The BFF's demo accounts (AUTH_MODE=demo).
export const demoUsers = {
  alice: "student",
  bob: "student",
  carol: "student",
  tara: "ta",
  ivan: "instructor",
} as const;

export type DemoUser = keyof typeof demoUsers;

export const demoPassword = "demo";
