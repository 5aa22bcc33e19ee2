// The BFF's demo accounts (AUTH_MODE=demo): alice and bob in section "a", carol in "b"; tara a TA
// of the whole course, tom a TA of section "b" (src/server/auth/users-file.ts).
export const demoUsers = {
  alice: "student",
  bob: "student",
  carol: "student",
  tara: "ta",
  tom: "ta",
  ivan: "instructor",
} as const;

export type DemoUser = keyof typeof demoUsers;

export const demoPassword = "demo";
