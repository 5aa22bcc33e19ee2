import { describe, expect, it } from "vitest";
import { authenticatedUser, serviceAccountUsername } from "./users.ts";

describe("authenticatedUser", () => {
  it("gives a service account the groups its token carries", () => {
    expect(authenticatedUser(serviceAccountUsername("lab-console", "lab-console"))).toEqual({
      username: "system:serviceaccount:lab-console:lab-console",
      groups: ["system:serviceaccounts", "system:serviceaccounts:lab-console", "system:authenticated"],
    });
  });

  it("adds system:authenticated to a user's own groups once", () => {
    expect(authenticatedUser("alice", ["students", "system:authenticated"])).toEqual({
      username: "alice",
      groups: ["students", "system:authenticated"],
    });
  });

  it("does not take a look-alike name for a service account", () => {
    expect(authenticatedUser("system:serviceaccount:only-namespace").groups).toEqual([
      "system:authenticated",
    ]);
  });
});
