// A guest's agent as KubeVirt sees it: connected from the end of cloud-init until the guest stops
// (the AgentConnected condition), and the facts behind its guestosinfo, userlist and filesystemlist
// answers (guest-info.ts shapes them): the hostname, the user and when it logged in on the console,
// and the guest's disks as the host reaches them while it runs.
import { join } from "node:path";
import {
  guestAgentInfo,
  guestFileSystemList,
  guestUserList,
  type GuestAgentInfo,
  type GuestFacts,
  type GuestFileSystemList,
  type GuestOsUserList,
} from "../guest-info.ts";

export interface GuestAgentOptions {
  hostname: string;
  username: string;
  /** The user's home inside the guest. */
  guestHome: string;
  /** The guest's folder on the host. */
  guestDir: string;
  /** Where the host reaches a path of the running guest; undefined once it has stopped. */
  hostPathOf(path: string): string | undefined;
  /** Called on every change of connected. */
  onChange(connected: boolean): void;
}

export class GuestAgent {
  private readonly startedAt = Date.now() / 1000;
  private loginTime: number | undefined;
  private isConnected = false;

  constructor(private readonly options: GuestAgentOptions) {}

  get connected(): boolean {
    return this.isConnected;
  }

  /** cloud-init has finished: the console's user logs in and the agent connects. */
  booted(): void {
    this.loginTime = Date.now() / 1000;
    this.setConnected(true);
  }

  /** The guest has stopped, and its agent with it. */
  stopped(): void {
    this.setConnected(false);
  }

  guestOsInfo(): Promise<GuestAgentInfo> {
    return guestAgentInfo(this.facts());
  }

  userList(): GuestOsUserList {
    return guestUserList(this.facts());
  }

  filesystemList(): Promise<GuestFileSystemList> {
    return guestFileSystemList(this.facts());
  }

  private setConnected(connected: boolean): void {
    if (this.isConnected === connected) return;
    this.isConnected = connected;
    this.options.onChange(connected);
  }

  private facts(): GuestFacts {
    const { guestHome, hostname, guestDir, username } = this.options;
    // Not running: paths that do not exist, which the agent subresources never reach (no agent).
    const hostPath = (path: string) => this.options.hostPathOf(path) ?? join(guestDir, "gone");
    return {
      hostname,
      username,
      loginTime: this.loginTime ?? this.startedAt,
      mounts: [
        { diskName: "home", mountPoint: guestHome, hostPath: hostPath(guestHome) },
        { diskName: "tmp", mountPoint: "/tmp", hostPath: hostPath("/tmp") },
      ],
    };
  }
}
