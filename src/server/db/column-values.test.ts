import { describe, expect, it } from "vitest";
import { epochMsOf, isoOf, isoOrNullOf, jsonAsReturned, jsonFromText } from "./column-values.ts";

describe("column values from either driver", () => {
  const instant = "2026-03-04T05:06:07.089Z";

  it("reads a time stored as ISO text and one returned as a Date alike", () => {
    expect(isoOf(instant)).toBe(instant);
    expect(isoOf(new Date(instant))).toBe(instant);
    expect(epochMsOf(instant)).toBe(Date.parse(instant));
    expect(epochMsOf(new Date(instant))).toBe(Date.parse(instant));
    expect(isoOrNullOf(null)).toBeNull();
    expect(isoOrNullOf(new Date(instant))).toBe(instant);
  });

  it("parses SQLite's JSON text, and leaves a JSON string pg has already parsed as it is", () => {
    expect(jsonFromText('{"a":[1]}')).toEqual({ a: [1] });
    expect(jsonFromText('"{}"')).toBe("{}");
    expect(jsonAsReturned("{}")).toBe("{}");
    expect(jsonAsReturned(["s-1"])).toEqual(["s-1"]);
  });
});
