// KubeVirt's guestosinfo, userlist and filesystemlist bodies from the real agent's answers, converted
// as virt-launcher converts them (pkg/virt-launcher/virtwrap/agent-poller: guest-info, guest-get-osinfo,
// guest-get-host-name, guest-get-timezone, guest-get-users, guest-get-fsinfo).
import type {
  GuestAgentInfo,
  GuestFileSystem,
  GuestFileSystemList,
  GuestOsUser,
  GuestOsUserList,
} from "../guest-info.ts";
import type { AgentChannel } from "./agent-channel.ts";

type Json = Record<string, unknown>;

const text = (value: unknown) => (typeof value === "string" ? value : "");
const number = (value: unknown) => (typeof value === "number" ? value : 0);

export async function agentInfo(agent: AgentChannel): Promise<GuestAgentInfo> {
  const info = (await agent.execute("guest-info")) as Json;
  const os = (await agent.execute("guest-get-osinfo")) as Json;
  const host = (await agent.execute("guest-get-host-name")) as Json;
  const zone = (await agent.execute("guest-get-timezone")) as Json;
  const commands = Array.isArray(info.supported_commands) ? (info.supported_commands as Json[]) : [];
  return {
    guestAgentVersion: text(info.version),
    supportedCommands: commands.map((command) => ({
      name: text(command.name),
      enabled: command.enabled === true,
    })),
    hostname: text(host["host-name"]),
    os: {
      name: text(os.name),
      kernelRelease: text(os["kernel-release"]),
      version: text(os.version),
      prettyName: text(os["pretty-name"]),
      versionId: text(os["version-id"]),
      kernelVersion: text(os["kernel-version"]),
      machine: text(os.machine),
      id: text(os.id),
    },
    timezone: `${text(zone.zone)}, ${number(zone.offset)}`,
    userList: await users(agent),
    fsInfo: { disks: await fileSystems(agent) },
    fsFreezeStatus: "",
  };
}

export async function agentUserList(agent: AgentChannel): Promise<GuestOsUserList> {
  return { metadata: {}, items: await users(agent) };
}

export async function agentFileSystemList(agent: AgentChannel): Promise<GuestFileSystemList> {
  return { metadata: {}, items: await fileSystems(agent) };
}

async function users(agent: AgentChannel): Promise<GuestOsUser[]> {
  const answer = await agent.execute("guest-get-users");
  return (Array.isArray(answer) ? (answer as Json[]) : []).map((user) => ({
    userName: text(user.user),
    domain: text(user.domain),
    loginTime: number(user["login-time"]),
  }));
}

async function fileSystems(agent: AgentChannel): Promise<GuestFileSystem[]> {
  const answer = await agent.execute("guest-get-fsinfo");
  return (Array.isArray(answer) ? (answer as Json[]) : []).map((fs) => ({
    diskName: text(fs.name),
    mountPoint: text(fs.mountpoint),
    fileSystemType: text(fs.type),
    usedBytes: number(fs["used-bytes"]),
    totalBytes: number(fs["total-bytes"]),
    disk: (Array.isArray(fs.disk) ? (fs.disk as Json[]) : []).map((disk) => ({
      busType: text(disk["bus-type"]),
      ...(typeof disk.serial === "string" ? { serial: disk.serial } : {}),
    })),
  }));
}
