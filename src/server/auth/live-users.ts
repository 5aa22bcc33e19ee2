// The demo users as the users file says now, not as it said at start-up: a person taken out of the
// file, or given another role or other sections in it, is refused on their next request (SignIns
// asks `holds`; a TA moved out of a section must not keep seeing it until the cookie expires),
// and signing in uses the file's current passwords. The file is kept in memory and read again when
// its modification time, size or inode changes, looked at every 2 s in the background: a request
// never touches the disk. An edit that leaves the file unreadable or removes it keeps the users last
// read (a restart would refuse a broken file, or create the demo users in place of a missing one).
import { stat } from "node:fs/promises";
import type { Me } from "../../common/api.ts";
import type { UserStanding } from "./sign-ins.ts";
import { loadUsers, readUsers, type UserRecord } from "./users-file.ts";

const checkIntervalMs = 2000;

export interface LiveUsersOptions {
  /** How often the file's modification time is looked at. */
  checkIntervalMs?: number;
  log?: { info(message: string): void; warn(message: string): void };
}

export class LiveUsers implements UserStanding {
  private byName: Map<string, UserRecord>;
  private version: string;
  private readonly listeners = new Set<() => void>();
  private readonly timer: NodeJS.Timeout;
  private checking = false;

  private constructor(
    private readonly file: string,
    users: UserRecord[],
    version: string,
    private readonly options: LiveUsersOptions,
  ) {
    this.byName = byName(users);
    this.version = version;
    this.timer = setInterval(() => void this.check(), options.checkIntervalMs ?? checkIntervalMs);
    this.timer.unref();
  }

  /** Reads the file (creating it with the demo users when missing; see loadUsers), then watches it. */
  static async open(file: string, options: LiveUsersOptions = {}): Promise<LiveUsers> {
    const users = await loadUsers(file);
    return new LiveUsers(file, users, await versionOf(file), options);
  }

  get users(): UserRecord[] {
    return [...this.byName.values()];
  }

  find(username: string): UserRecord | undefined {
    return this.byName.get(username);
  }

  holds(user: Me): boolean {
    const current = this.byName.get(user.username);
    return (
      current !== undefined &&
      current.role === user.role &&
      current.sections.length === user.sections.length &&
      current.sections.every((section, index) => user.sections[index] === section)
    );
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const version = await versionOf(this.file);
      if (version === this.version) return;
      // Remembered before reading: a broken file is reported once, not every 2 s until it is fixed.
      this.version = version;
      const users = await readUsers(this.file);
      this.byName = byName(users);
      this.options.log?.info(`${this.file} changed: ${users.length} users now.`);
      for (const listener of this.listeners) listener();
    } catch (error) {
      this.options.log?.warn(
        `${this.file} cannot be read again (${error instanceof Error ? error.message : String(error)}): ` +
          "the users read last still apply until it is fixed.",
      );
    } finally {
      this.checking = false;
    }
  }
}

function byName(users: UserRecord[]): Map<string, UserRecord> {
  return new Map(users.map((user) => [user.username, user]));
}

/** What changes when the file is edited in place or replaced (a new inode, as editors and ConfigMaps do). */
async function versionOf(file: string): Promise<string> {
  try {
    const { mtimeMs, size, ino } = await stat(file);
    return `${mtimeMs}:${size}:${ino}`;
  } catch (error) {
    // Missing or unreadable is a version too: reported once, when it starts.
    return `unreadable:${(error as NodeJS.ErrnoException).code}`;
  }
}
