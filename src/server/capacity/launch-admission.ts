// Decides, before anything reaches the cluster, whether a launch may go ahead: the per-student, per-lab
// and overall limits on active sessions, then whether one more VM of the lab fits on a node. A refusal
// names the limit and says when room frees up.
//
// Launches in flight are held as reservations from the check until reads show their VM, so two
// launches checked at the same moment cannot both take the last place.
import type { Me } from "../../common/api.ts";
import type { Lab } from "../../common/lab.ts";
import type { ErrorParams, ErrorReason } from "../../common/error-reasons.ts";
import { DomainError } from "../errors/domain-error.ts";
import type { SessionSource } from "../sessions/source.ts";
import { placeHoldingStatuses } from "../sessions/status.ts";
import type { CapacityService } from "./capacity-service.ts";
import type { PodRequest } from "./launcher-resources.ts";
import { countFits, largestFree } from "./node-room.ts";

/** A reservation whose VM never showed up in reads (a lost watch event) stops counting after this. */
const reservationTimeoutMs = 60_000;

export type RefusalReason = "per-student" | "per-lab" | "total" | "capacity";

/** Limits on active sessions at once; null = no limit. */
export interface SessionQuotas {
  perStudent: number;
  perLab: number | null;
  total: number | null;
}

export interface Admission {
  /** Call once the launch is over: `launched` false when no VM was created, which frees the place at once. */
  release(launched: boolean): void;
}

export interface LaunchAdmissionDeps {
  quotas: SessionQuotas;
  capacity: CapacityService;
  source: SessionSource;
  labs: Lab[];
  now: () => Date;
  log: { warn(object: object, message: string): void };
  onRefused?: (reason: RefusalReason) => void;
}

interface Reservation {
  sessionId: string;
  owner: string;
  labId: string;
  request: PodRequest | undefined;
  at: number;
}

/** Stands in for a session whose VM reads do not show yet. */
interface Holder {
  owner: string;
  labId: string;
  expiresAt: string | undefined;
}

export class LaunchAdmission {
  private reservations: Reservation[] = [];
  private readonly labTitles: Map<string, string>;

  constructor(private readonly deps: LaunchAdmissionDeps) {
    this.labTitles = new Map(deps.labs.map((lab) => [lab.id, lab.title]));
  }

  /**
   * Throws a DomainError (over_quota, no_capacity), or holds a place for `sessionId` until released.
   * `roomHeld`: the VM exists already (a warm one being claimed), so only the quotas are checked.
   */
  async admit(
    user: Me,
    lab: Lab,
    sessionId: string,
    options: { roomHeld?: boolean } = {},
  ): Promise<Admission> {
    const { capacity, source, log } = this.deps;
    let shape: Awaited<ReturnType<CapacityService["clusterShape"]>> | undefined;
    try {
      shape = await capacity.clusterShape();
    } catch (error) {
      // The cluster is the final judge of room; not knowing the nodes must not stop every launch.
      log.warn({ err: error }, "capacity unknown: nodes or the KubeVirt CR could not be read");
    }
    const snapshot = await source.snapshot();
    // From here to the reservation nothing awaits, so no other admission interleaves.
    const now = this.deps.now().getTime();
    const visible = new Set(snapshot.sessions.map((session) => session.id));
    this.reservations = this.reservations.filter(
      (reservation) => !visible.has(reservation.sessionId) && now - reservation.at < reservationTimeoutMs,
    );
    const holders: Holder[] = [
      ...snapshot.sessions.filter((session) => placeHoldingStatuses.has(session.status)),
      ...this.reservations.map((reservation) => ({ ...reservation, expiresAt: undefined })),
    ];
    this.checkQuotas(user, lab, holders, now);

    let request: PodRequest | undefined;
    if (shape && !options.roomHeld) {
      request = capacity.podRequestFor(lab, shape, snapshot);
      const pending = this.reservations.flatMap((reservation) =>
        reservation.request ? [reservation.request] : [],
      );
      const rooms = capacity.rooms(shape, snapshot, pending);
      if (countFits(rooms, request, 1) === 0) {
        const active = snapshot.sessions.filter((session) => placeHoldingStatuses.has(session.status));
        this.refuse("capacity", noRoom(lab, request, rooms, nextEnd(active, now)));
      }
    }

    const reservation: Reservation = { sessionId, owner: user.username, labId: lab.id, request, at: now };
    this.reservations.push(reservation);
    const drop = () => {
      this.reservations = this.reservations.filter((entry) => entry !== reservation);
    };
    return {
      release: (launched) => {
        // A failed launch gives its place back at once; a launched VM keeps it until reads show the VM
        // (usually already so: the launch waits for that), as the snapshots count it from then on.
        if (!launched) return drop();
        source.snapshot().then(
          (current) => {
            if (current.sessions.some((session) => session.id === sessionId)) drop();
          },
          () => undefined,
        );
      },
    };
  }

  private checkQuotas(user: Me, lab: Lab, holders: Holder[], now: number): void {
    const { perStudent, perLab, total } = this.deps.quotas;
    if (user.role === "student") {
      const own = holders.filter((holder) => holder.owner === user.username);
      if (own.length >= perStudent) {
        const titles = [...new Set(own.map((holder) => this.labTitles.get(holder.labId) ?? holder.labId))];
        const labs = titles.map((title) => `"${title}"`);
        const ends = nextEnd(own, now);
        this.refuse("per-student", {
          reason: "quota_per_student",
          params: { labs: titles.join(", "), limit: perStudent, ...endsAt(ends) },
          message:
            own.length === 1
              ? `You already have an active session (${labs.join(", ")}), and students may have ${perStudent} at ` +
                `a time. End it to start another${ends ? `; otherwise it ends ${ends.words}` : ""}.`
              : `You already have ${own.length} active sessions (${labs.join(", ")}), and students may have ` +
                `${perStudent} at a time. End one to start another${ends ? `; otherwise the next one ends ${ends.words}` : ""}.`,
        });
      }
    }
    if (perLab !== null) {
      const ofLab = holders.filter((holder) => holder.labId === lab.id);
      if (ofLab.length >= perLab) {
        const ends = nextEnd(ofLab, now);
        this.refuse("per-lab", {
          reason: "quota_per_lab",
          params: { lab: lab.title, limit: perLab, ...endsAt(ends) },
          message: `"${lab.title}" is full: it allows ${perLab} active sessions at once. ${tryAgain(ends)}`,
        });
      }
    }
    if (total !== null && holders.length >= total) {
      const ends = nextEnd(holders, now);
      this.refuse("total", {
        reason: "quota_total",
        params: { limit: total, ...endsAt(ends) },
        message: `Lab Console is at its limit of ${total} active sessions at once. ${tryAgain(ends)}`,
      });
    }
  }

  private refuse(limit: RefusalReason, refusal: Refusal): never {
    this.deps.onRefused?.(limit);
    const kind = limit === "capacity" ? "no_capacity" : "over_quota";
    throw new DomainError(kind, refusal.reason, refusal.message, refusal.params);
  }
}

interface Refusal {
  reason: ErrorReason;
  params: ErrorParams;
  message: string;
}

/** When the first of the holders ends, and that in words ("in 12 min"); undefined when none is known yet. */
interface NextEnd {
  at: string;
  words: string;
}

function nextEnd(holders: { expiresAt?: string | undefined }[], now: number): NextEnd | undefined {
  const first = holders
    .map((holder) => Date.parse(holder.expiresAt ?? ""))
    .filter((time) => Number.isFinite(time))
    .sort((a, b) => a - b)[0];
  return first === undefined
    ? undefined
    : { at: new Date(first).toISOString(), words: formatIn(first - now) };
}

/** The SPA says "the next one ends in 12 min" in the reader's language from this. */
function endsAt(ends: NextEnd | undefined): { endsAt?: string } {
  return ends ? { endsAt: ends.at } : {};
}

function tryAgain(ends: NextEnd | undefined): string {
  return ends ? `Try again when one ends; the next one ends ${ends.words}.` : "Try again when one ends.";
}

export function formatIn(ms: number): string {
  if (ms < 60_000) return "in under a minute";
  const minutes = Math.ceil(ms / 60_000);
  if (minutes < 60) return `in ${minutes} min`;
  const rest = minutes % 60;
  return `in ${Math.floor(minutes / 60)} h${rest === 0 ? "" : ` ${rest} min`}`;
}

function noRoom(
  lab: Lab,
  request: PodRequest,
  rooms: ReturnType<CapacityService["rooms"]>,
  ends: NextEnd | undefined,
): Refusal {
  if (rooms.length === 0) {
    return {
      reason: "no_nodes_for_labs",
      params: {},
      message:
        "No node in the cluster can run lab VMs right now (none is Ready, schedulable and has KVM). " +
        "Tell your instructor: the doctor page shows why.",
    };
  }
  const free = largestFree(rooms);
  const freeCpu = Math.max(0, free.cpuMillis);
  const freeMemory = Math.max(0, free.memoryBytes);
  return {
    reason: "no_room",
    params: {
      lab: lab.title,
      needCpu: cpus(request.cpuMillis),
      needMemory: memorySize(request.memoryBytes),
      freeCpu: cpus(freeCpu),
      freeMemory: memorySize(freeMemory),
      ...endsAt(ends),
    },
    message:
      `There is no room on the cluster for another "${lab.title}" VM right now: it needs ` +
      `${formatCpu(request.cpuMillis)} and ${formatMemory(request.memoryBytes)} on one node, and the most ` +
      `any node has free is ${formatCpu(freeCpu)} and ${formatMemory(freeMemory)}. Room frees up as sessions end` +
      (ends ? `; the next one ends ${ends.words}.` : "."),
  };
}

function cpus(millis: number): number {
  return Number((millis / 1000).toFixed(3));
}

/** "1.5 GiB", "512 MiB": units every language writes the same way. */
function memorySize(bytes: number): string {
  const gib = bytes / 2 ** 30;
  return gib >= 1 ? `${gib.toFixed(1)} GiB` : `${Math.round(bytes / 2 ** 20)} MiB`;
}

export function formatCpu(millis: number): string {
  return `${cpus(millis)} CPU`;
}

export function formatMemory(bytes: number): string {
  return `${memorySize(bytes)} of memory`;
}
