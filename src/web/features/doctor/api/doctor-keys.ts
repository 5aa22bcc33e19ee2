// The doctor feature's query keys: one report, so one key.
export const doctorKeys = { all: ["doctor"] as const };
