import { describe, expect, it } from "vitest";
import { lastErrorOf } from "./lms-refusal.ts";

describe("a score's last error", () => {
  it("keeps only the LMS's words of a refusal", () => {
    expect(
      lastErrorOf(
        "127.0.0.1:41619 refused a score (HTTP 422): Course not available for grading: the course is not published",
      ),
    ).toEqual({
      kind: "lms",
      status: 422,
      reason: "Course not available for grading: the course is not published",
    });
    expect(
      lastErrorOf("canvas.example.edu refused a line item for linux-basics (HTTP 403): (unauthorized)"),
    ).toEqual({ kind: "lms", status: 403, reason: "(unauthorized)" });
  });

  it("has no reason when the LMS gave none", () => {
    expect(lastErrorOf("lms.example.edu refused a score (HTTP 400): no reason given")).toEqual({
      kind: "lms",
      status: 400,
      reason: null,
    });
  });

  it("leaves Lab Console's own sentences whole", () => {
    const timeout = "lms.example.edu did not answer a score within 10 s.";
    expect(lastErrorOf(timeout)).toEqual({ kind: "other", text: timeout });
    const noColumn =
      "CS 101 on Moodle offered no line items service at any launch (its AGS claim named no lineitems URL): " +
      "the LMS must allow this tool to manage grade columns.";
    expect(lastErrorOf(noColumn)).toEqual({ kind: "other", text: noColumn });
  });
});
