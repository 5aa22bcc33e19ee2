import { useId, useState } from "react";
import { useTranslation } from "react-i18next";
import type { Session } from "../../../../common/api.ts";
import { fileLimits } from "../../../../common/files-api.ts";
import { ApiError } from "../../../lib/api-error.ts";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import { isStaff } from "../../../lib/roles.ts";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";
import { downloadFile, saveBlob, uploadFile } from "../api/transfer-file.ts";
import { formatSize } from "../lib/format-size.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { TransferProgress } from "./transfer-progress.tsx";
import { useTransfer, type Transfer } from "./use-transfer.ts";
import "./files.css";

/**
 * Files in and out of the student's home while the VM runs (docs/files.md): the owner uploads and
 * downloads; staff download, for a grading dispute. Each transfer shows its progress and ends
 * with what was moved or why not.
 */
export function FilesPanel({ session }: { session: Session }) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const owner = me.username === session.owner;
  if (session.status !== "running" || !(owner || isStaff(me.role))) return null;
  return (
    <section className="panel files-panel" aria-labelledby="files-title">
      <h2 id="files-title" className="panel-title">
        {t("files.title")}
      </h2>
      <p className="muted">
        {owner ? t("files.lead", { maxMiB: fileLimits.maxBytes / 1024 / 1024 }) : t("files.leadStaff")}
      </p>
      <div className="files-forms">
        {owner && <UploadForm sessionId={session.id} />}
        <DownloadForm sessionId={session.id} />
      </div>
    </section>
  );
}

function UploadForm({ sessionId }: { sessionId: string }) {
  const { t } = useTranslation();
  const format = useFormat();
  const id = useId();
  const [file, setFile] = useState<File | null>(null);
  const [saveAs, setSaveAs] = useState("");
  const { transfer, moving, run, fail, reset } = useTransfer();

  async function upload() {
    if (!file) return;
    const path = saveAs.trim() === "" ? file.name : saveAs.trim();
    // Refused here before a byte is sent; the BFF and the agent refuse it as well.
    if (file.size > fileLimits.maxBytes) {
      return fail(
        new ApiError(0, "too_large", "The file is too large.", {
          reason: "too_large",
          params: { maxMiB: fileLimits.maxBytes / 1024 / 1024 },
        }),
      );
    }
    await run(file.size, (onProgress) => uploadFile(sessionId, path, file, onProgress));
  }

  return (
    <form
      className="files-form"
      aria-labelledby={`${id}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        void upload();
      }}
    >
      <h3 id={`${id}-title`}>{t("files.upload.label")}</h3>
      {/* The browser's own file button speaks the browser's language, not the page's: this one
          speaks the page's, and the real input (hidden, still focusable) does the choosing. */}
      <div className="file-choice">
        <span id={`${id}-file`}>{t("files.upload.choose")}</span>
        <span className="file-choice-row">
          <label className="button">
            {t("files.upload.pick")}
            <input
              type="file"
              className="visually-hidden"
              aria-labelledby={`${id}-file`}
              aria-describedby={`${id}-chosen`}
              onChange={(event) => {
                setFile(event.target.files?.[0] ?? null);
                reset();
              }}
            />
          </label>
          <span id={`${id}-chosen`} className="muted" translate={file ? "no" : undefined}>
            {file?.name ?? t("files.upload.noFile")}
          </span>
        </span>
      </div>
      <label>
        {t("files.upload.saveAs")}
        <input
          type="text"
          value={saveAs}
          placeholder={file?.name ?? t("files.pathExample")}
          maxLength={fileLimits.pathLength}
          onChange={(event) => setSaveAs(event.target.value)}
        />
      </label>
      <button type="submit" className="button" disabled={!file || moving}>
        {t("files.upload.submit")}
      </button>
      <TransferState
        transfer={transfer}
        progressLabel={t("files.upload.progress")}
        doneText={(path, bytes) => t("files.upload.done", { path, size: formatSize(bytes, format.number) })}
      />
    </form>
  );
}

function DownloadForm({ sessionId }: { sessionId: string }) {
  const { t } = useTranslation();
  const format = useFormat();
  const id = useId();
  const [path, setPath] = useState("");
  const { transfer, moving, run } = useTransfer();

  async function download() {
    const wanted = path.trim();
    await run(0, async (onProgress) => {
      const blob = await downloadFile(sessionId, wanted, onProgress);
      saveBlob(blob, wanted.split("/").at(-1) ?? wanted);
      return { path: wanted, bytes: blob.size };
    });
  }

  return (
    <form
      className="files-form"
      aria-labelledby={`${id}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        void download();
      }}
    >
      <h3 id={`${id}-title`}>{t("files.download.label")}</h3>
      <label>
        {t("files.download.path")}
        <input
          type="text"
          value={path}
          placeholder={t("files.pathExample")}
          maxLength={fileLimits.pathLength}
          onChange={(event) => setPath(event.target.value)}
        />
      </label>
      <button type="submit" className="button" disabled={path.trim() === "" || moving}>
        {t("files.download.submit")}
      </button>
      <TransferState
        transfer={transfer}
        progressLabel={t("files.download.progress")}
        doneText={(done, bytes) =>
          t("files.download.done", { path: done, size: formatSize(bytes, format.number) })
        }
      />
    </form>
  );
}

function TransferState({
  transfer,
  progressLabel,
  doneText,
}: {
  transfer: Transfer;
  progressLabel: string;
  doneText: (path: string, bytes: number) => string;
}) {
  if (transfer.state === "idle") return null;
  // A transfer refused before its first byte moved has no progress to show, only why.
  const progress = transfer.state === "failed" && transfer.progress?.done === 0 ? null : transfer.progress;
  return (
    <>
      {progress && <TransferProgress progress={progress} label={progressLabel} />}
      <p role="status" className="files-status">
        {transfer.state === "done" && doneText(transfer.path, transfer.bytes)}
      </p>
      {transfer.state === "failed" && (
        <p className="notice notice-error" role="alert">
          <ErrorText error={transfer.error} />
        </p>
      )}
    </>
  );
}
