import { useState } from "react";
import type { UploadedFile } from "../../../../common/files-api.ts";
import type { OnProgress } from "../api/transfer-file.ts";
import type { Progress } from "./transfer-progress.tsx";

export type Transfer =
  | { state: "idle" }
  | { state: "moving"; progress: Progress }
  | { state: "done"; progress: Progress; path: string; bytes: number }
  | { state: "failed"; progress: Progress | null; error: unknown };

/** One form's transfer: moving with its progress, then done with what it moved, or failed and why. */
export function useTransfer() {
  const [transfer, setTransfer] = useState<Transfer>({ state: "idle" });

  /** `total`: the size, when it is known before the first byte moves (an upload's). */
  // What a finished transfer moved is what an upload answers with, for a download as well.
  async function run(total: number, move: (onProgress: OnProgress) => Promise<UploadedFile>): Promise<void> {
    let progress: Progress = { done: 0, total };
    setTransfer({ state: "moving", progress });
    try {
      const moved = await move((done, total) => {
        progress = { done, total };
        setTransfer({ state: "moving", progress });
      });
      setTransfer({ state: "done", progress: { done: moved.bytes, total: moved.bytes }, ...moved });
    } catch (error) {
      setTransfer({ state: "failed", progress, error });
    }
  }

  return {
    transfer,
    moving: transfer.state === "moving",
    run,
    /** Refused before anything moved. */
    fail: (error: unknown) => setTransfer({ state: "failed", progress: null, error }),
    reset: () => setTransfer({ state: "idle" }),
  };
}
