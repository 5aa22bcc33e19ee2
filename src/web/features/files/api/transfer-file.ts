// Moves one file between this browser and the session's home (docs/files.md). Uploads go through
// XMLHttpRequest, the one browser API that reports an upload's progress; downloads through fetch,
// read chunk by chunk to report theirs. Both fail with ApiError, as every API call does.
import { csrfHeader } from "../../../../common/api.ts";
import { UploadedFile } from "../../../../common/files-api.ts";
import { apiErrorOf, apiFetch } from "../../../lib/api-client.ts";
import { ApiError } from "../../../lib/api-error.ts";

/** Bytes moved so far, of all. */
export type OnProgress = (done: number, total: number) => void;

const filesPath = (sessionId: string, path: string) =>
  `/sessions/${encodeURIComponent(sessionId)}/files?path=${encodeURIComponent(path)}`;

/** Made by the page itself (status 0): the transfer broke off, no answer to read. */
export const brokenTransfer = () =>
  new ApiError(0, "transfer_failed", "The transfer broke off before it finished. Try again.", {
    reason: "transfer_failed",
  });

export function uploadFile(
  sessionId: string,
  path: string,
  file: Blob,
  onProgress: OnProgress,
  signal?: AbortSignal,
): Promise<UploadedFile> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", `/api${filesPath(sessionId, path)}`);
    xhr.setRequestHeader(csrfHeader.name, csrfHeader.value);
    xhr.setRequestHeader("Content-Type", "application/octet-stream");
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (event) =>
      onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
    xhr.onload = () => {
      const body = parseJson(xhr.responseText);
      if (xhr.status >= 200 && xhr.status < 300) {
        const parsed = UploadedFile.safeParse(body);
        if (parsed.success) return resolve(parsed.data);
        return reject(
          new ApiError(
            xhr.status,
            "bad_response",
            "The server sent an answer this page does not understand.",
          ),
        );
      }
      reject(apiErrorOf(xhr.status, body, xhr.getResponseHeader("retry-after")));
    };
    xhr.onerror = () => reject(brokenTransfer());
    xhr.onabort = () => reject(signal?.reason ?? brokenTransfer());
    signal?.addEventListener("abort", () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}

/** The file's bytes, whole once they all arrived; a download that breaks off is an error. */
export async function downloadFile(
  sessionId: string,
  path: string,
  onProgress: OnProgress,
  signal?: AbortSignal,
): Promise<Blob> {
  const response = await apiFetch(filesPath(sessionId, path), "application/octet-stream", { signal });
  const total = Number(response.headers.get("content-length") ?? "0");
  if (!response.body) throw brokenTransfer();
  const reader = response.body.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let done = 0;
  onProgress(0, total);
  for (;;) {
    let part;
    try {
      part = await reader.read();
    } catch (error) {
      if (signal?.aborted) throw error;
      throw brokenTransfer();
    }
    if (part.done) break;
    chunks.push(part.value);
    done += part.value.length;
    onProgress(done, total);
  }
  if (done !== total) throw brokenTransfer();
  return new Blob(chunks, { type: "application/octet-stream" });
}

/** Hands the browser a file to save, as a link with `download` would. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.click();
  // After the click's task: the browser has taken the URL by then.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
