// Who may type into one VM's console. The owner holds the keyboard unless staff took it; staff give it
// back, or it returns to the owner once its holder's last viewer closed. Watchers never type.
import type { FastifyBaseLogger } from "fastify";
import type { KeyboardMessage } from "../../common/console-protocol.ts";
import type { ViewerIdentity } from "./viewer.ts";

export interface ConsoleKeyboardDeps {
  sessionId: string;
  owner: string;
  log: FastifyBaseLogger;
  /** The holder changed: every viewer needs its keyboard message again. */
  changed(): void;
  /** Staff took the keyboard from `from` (the owner, or other staff). */
  onTaken?(by: ViewerIdentity, from: string): void;
}

export class ConsoleKeyboard {
  private holder: string;

  constructor(private readonly deps: ConsoleKeyboardDeps) {
    this.holder = deps.owner;
  }

  canType(identity: ViewerIdentity): boolean {
    return identity.access !== "watcher" && identity.username === this.holder;
  }

  /** Who holds it now: the owner, or the staff member who took it. */
  get heldBy(): string {
    return this.holder;
  }

  isHeldBy(username: string): boolean {
    return this.holder === username;
  }

  take(identity: ViewerIdentity): void {
    const { access, username } = identity;
    if (access === "watcher" || this.holder === username) return;
    const from = this.holder;
    this.giveTo(username, "taken");
    // The owner taking their own keyboard back is not news; staff typing in a student's VM is.
    if (access === "staff") this.deps.onTaken?.(identity, from);
  }

  release(identity: ViewerIdentity): void {
    if (identity.access === "staff" && this.holder === identity.username) {
      this.giveTo(this.deps.owner, "given back");
    }
  }

  /** The last of this person's viewers closed: staff holding the keyboard lose it to the owner. */
  personLeft(identity: ViewerIdentity): void {
    if (identity.access === "staff" && this.holder === identity.username) {
      this.giveTo(this.deps.owner, "returned (its holder left)");
    }
  }

  messageFor(identity: ViewerIdentity): KeyboardMessage {
    const { access, username } = identity;
    const holds = this.holder === username;
    return {
      type: "keyboard",
      holder: this.holder,
      holderIsOwner: this.holder === this.deps.owner,
      canType: this.canType(identity),
      canTake: access !== "watcher" && !holds,
      canRelease: access === "staff" && holds,
    };
  }

  private giveTo(username: string, how: string): void {
    if (this.holder === username) return;
    this.deps.log.info(
      { sessionId: this.deps.sessionId, from: this.holder, to: username },
      `console keyboard ${how}`,
    );
    this.holder = username;
    this.deps.changed();
  }
}
