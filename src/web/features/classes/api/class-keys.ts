// The classes feature's query keys: one schedule, so one key.
export const classKeys = { all: ["classes"] as const };
