// How fast passwords may be tried (demo sign-in; with OpenID Connect the provider does this). Every
// attempt hashes a password, tens of milliseconds of CPU, and a wrong one is a guess. Three token
// buckets, reasoned in docs/auth.md ("How fast passwords may be tried"):
//
// - every attempt from one address: a class of 300 behind one NAT can sign in together;
// - failures at one name from one address: the guessing limit, and the only one a shared address can
//   use up for a name, so a burst there keeps that name out there for at most one refill (30 s);
// - failures at one name from anywhere: bounds guesses spread over many addresses, and, as no single
//   address can take more than a third of it, is not emptied by one classroom.
//
// A browser that signed in as the person before (known-device.ts) is counted apart: its failures
// have buckets of their own and the name's common bucket does not apply, so whoever keeps the name's
// buckets empty still cannot keep the person out of their own browser.
//
// An attempt takes its tokens before hashing, so concurrent attempts cannot all pass a check none of
// them has taken from yet; a refused one takes nothing, so no bucket ever goes below empty and no
// burst, however large, makes a wait longer than one refill. A right password gives its name's tokens
// back: signing in is not guessing.
import { RateLimiter, refuseWhileLimited, type RateLimit, type Refusal } from "../http/rate-limit.ts";

export const signInLimits = {
  attemptsPerAddress: { burst: 300, refillMs: 200 },
  failuresPerNameAndAddress: { burst: 10, refillMs: 30_000 },
  failuresPerName: { burst: 30, refillMs: 10_000 },
} as const satisfies Record<string, RateLimit>;

const tooManySignIns: Refusal = {
  reason: "sign_in_too_often",
  message: (seconds) => `Too many sign-in attempts. Try again in ${seconds} s.`,
};

export class SignInLimiter {
  private readonly attempts: RateLimiter;
  private readonly failuresHere: RateLimiter;
  private readonly failures: RateLimiter;

  constructor(now: () => number = Date.now) {
    this.attempts = new RateLimiter(signInLimits.attemptsPerAddress, now);
    this.failuresHere = new RateLimiter(signInLimits.failuresPerNameAndAddress, now);
    this.failures = new RateLimiter(signInLimits.failuresPerName, now);
  }

  /**
   * Takes one attempt at `username` from `address` (an addressKey) from every limit, or refuses with
   * 429 and Retry-After, taking nothing. Call the returned function when it was no guess after all:
   * the password was right, or could not be checked.
   */
  reserve(address: string, username: string, knownDevice: boolean): () => void {
    const here = `${address}\n${username}${knownDevice ? "\nknown device" : ""}`;
    const buckets: [RateLimiter, string][] = [
      [this.attempts, address],
      [this.failuresHere, here],
      ...(knownDevice ? [] : [[this.failures, username] as [RateLimiter, string]]),
    ];
    // Checked and taken with nothing awaited in between: no other attempt runs in the meantime.
    refuseWhileLimited(
      Math.max(...buckets.map(([limiter, key]) => limiter.waitSeconds(key))),
      tooManySignIns,
    );
    for (const [limiter, key] of buckets) limiter.tryTake(key);
    return () => {
      for (const [limiter, key] of buckets.slice(1)) limiter.giveBack(key);
    };
  }
}
