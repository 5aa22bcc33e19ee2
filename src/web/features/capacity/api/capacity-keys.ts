// The capacity feature's query keys: one report, so one key.
export const capacityKeys = { all: ["capacity"] as const };
