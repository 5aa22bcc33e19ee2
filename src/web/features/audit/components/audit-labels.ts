import type { AuditAction } from "../../../../common/operations-api.ts";

export const auditActionLabels: Record<AuditAction, string> = {
  "sign-in": "Signed in",
  "sign-in-failed": "Sign-in refused",
  launch: "Launched",
  extend: "Extended",
  end: "Ended",
  "console-attach": "Opened the console",
  "console-detach": "Left the console",
  "take-keyboard": "Took the keyboard",
  "self-check": "Checked their work",
  "grading-run": "Started grading",
  export: "Exported",
};
