// Why the BFF refused a request, beside its general error code: `reason` names the refusal and
// `params` fill in its sentence. The SPA says each reason in the reader's language from its catalogs
// (errors.reasons.*); the BFF's English `message` is for API clients and logs. A reason is added here
// first, so the catalog test can ask every language for it.
import { fileErrorCodes } from "./files-api.ts";

export const errorReasons = [
  // Access
  "sign_in_first",
  "staff_only",
  "instructor_only",
  "owner_only",
  "staff_must_observe",
  // Sign-in
  "wrong_password",
  "password_sign_in_off",
  "sign_in_too_often",
  // Labs and sessions
  "lab_not_found",
  "session_not_found",
  "terminal_not_found",
  "screen_not_offered",
  "session_already_running",
  "launch_too_often",
  "quota_per_student",
  "quota_per_lab",
  "quota_total",
  "no_nodes_for_labs",
  "no_room",
  "network_policy_rejected",
  "restart_not_running",
  "restart_in_progress",
  "restart_too_often",
  "resume_not_paused",
  "launch_busy",
  // Classes
  "class_not_found",
  "class_ends_before_start",
  "class_too_long",
  "class_in_past",
  // Announcements
  "announcement_not_found",
  "announce_own_sections",
  "announce_too_often",
  // Time
  "lab_no_longer_offered",
  "extend_not_active",
  "no_end_time",
  "time_already_up",
  "extension_not_allowed",
  "extensions_used_up",
  "extending_already",
  "changed_meanwhile",
  // Help
  "help_session_ended",
  "hand_not_raised",
  "help_too_often",
  // Grading
  "run_not_found",
  "not_sessions_of_lab",
  "nothing_running_to_grade",
  "run_already_going",
  "run_still_going",
  "nothing_to_rerun",
  "no_self_checks",
  "self_check_too_soon",
  // LTI grades and rosters
  "lti_course_not_found",
  "lti_no_roster",
  "lti_lms_failed",
  "lti_score_not_found",
  "lti_score_not_retryable",
  "lti_score_superseded",
  // Console and recordings
  "console_moving",
  "console_cluster_unreachable",
  "recording_not_found",
  "recording_busy",
  "shutting_down",
  // Files: the files routes' codes are their reasons too
  ...fileErrorCodes,
  "files_need_running_vm",
  // LTI
  "lti_deep_link_not_found",
  "lti_lab_choice_invalid",
  "lti_platform_not_found",
  "lti_approve_from_lms",
] as const;
export type ErrorReason = (typeof errorReasons)[number];

/**
 * What a reason's sentence needs: names, counts, seconds. `endsAt` (an ISO time) is when the next
 * session ends, which the SPA says as "in 12 min" in the reader's language.
 */
export type ErrorParams = Record<string, string | number>;

/** Whether a string from the wire is one of `values` (a reason this side knows): narrows it. */
export function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}
