import { describe, expect, it } from "vitest";
import { keyboardNews, type ConsoleViewers } from "./keyboard-news.ts";

const alice = { username: "alice", role: "student", mode: "type" } as const;
const aliceWatching = { ...alice, mode: "observe" } as const;
const tara = { username: "tara", role: "ta", mode: "observe" } as const;
const taraTyping = { ...tara, mode: "type" } as const;
const ivanTyping = { username: "ivan", role: "instructor", mode: "type" } as const;

const list = (holder: string, ...viewers: ConsoleViewers["viewers"]): ConsoleViewers => ({ viewers, holder });

describe("keyboardNews", () => {
  it("says nothing for the first list, a join, or no change of holder", () => {
    expect(keyboardNews(null, list("tara", aliceWatching, taraTyping))).toBeUndefined();
    expect(keyboardNews(list("alice", alice), list("alice", alice, tara))).toBeUndefined();
  });

  it("tells who of the staff took the keyboard, from the student or from other staff", () => {
    expect(keyboardNews(list("alice", alice, tara), list("tara", aliceWatching, taraTyping))).toEqual({
      kind: "taken",
      username: "tara",
      role: "ta",
    });
    expect(
      keyboardNews(
        list("tara", taraTyping, { ...ivanTyping, mode: "observe" }),
        list("ivan", tara, ivanTyping),
      ),
    ).toEqual({ kind: "taken", username: "ivan", role: "instructor" });
  });

  it("tells when staff no longer hold it: given back, taken back, or they left", () => {
    const taken = list("tara", aliceWatching, taraTyping);
    expect(keyboardNews(taken, list("alice", alice, tara))).toEqual({
      kind: "returned",
      username: "tara",
      role: "ta",
    });
    expect(keyboardNews(taken, list("alice", alice))).toEqual({
      kind: "returned",
      username: "tara",
      role: "ta",
    });
  });
});
