// A stand-in for the browser's XMLHttpRequest with what an upload uses (api/transfer-file.ts): the
// test plays the server, reporting the upload's progress and answering when it chooses.
export class FakeUploadRequest {
  /** The request the page made last. */
  static last: FakeUploadRequest | undefined;

  method = "";
  url = "";
  body: unknown;
  status = 0;
  responseText = "";
  readonly upload: { onprogress: ((event: ProgressEvent) => void) | null } = { onprogress: null };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;

  constructor() {
    FakeUploadRequest.last = this;
  }

  open(method: string, url: string): void {
    this.method = method;
    this.url = url;
  }

  setRequestHeader(): void {}

  getResponseHeader(): string | null {
    return null;
  }

  send(body: unknown): void {
    this.body = body;
  }

  /** `loaded` of `total` bytes have gone out. */
  progress(loaded: number, total: number): void {
    this.upload.onprogress?.(new ProgressEvent("progress", { loaded, total, lengthComputable: true }));
  }

  /** The server answers with `status` and `body` as JSON. */
  respond(status: number, body: unknown): void {
    this.status = status;
    this.responseText = JSON.stringify(body);
    this.onload?.();
  }

  /** The connection breaks before any answer. */
  breakOff(): void {
    this.onerror?.();
  }
}
