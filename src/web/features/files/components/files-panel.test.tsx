import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { userEvent } from "vitest/browser";
import type { ApiErrorBody } from "../../../../common/api.ts";
import { fileLimits, type UploadedFile } from "../../../../common/files-api.ts";
import { aSession, aUser } from "../../../testing/data-generators.ts";
import { renderComponent } from "../../../testing/render-component.tsx";
import { FakeUploadRequest } from "../testing/fake-upload-request.ts";
import { FilesPanel } from "./files-panel.tsx";

const session = aSession({ id: "s-1", owner: "alice" });

const errorBody = (code: string, message: string, params = {}): ApiErrorBody => ({
  error: { code, message, reason: code, params },
});

/** A download's answer whose bytes the test sends, chunk by chunk, when it chooses. */
function streamedAnswer(size: number) {
  let sink!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (controller) => (sink = controller) });
  return {
    response: new Response(body, { headers: { "content-length": String(size) } }),
    send: (bytes: number) => sink.enqueue(new Uint8Array(bytes)),
    end: () => sink.close(),
  };
}

beforeEach(() => {
  vi.stubGlobal("XMLHttpRequest", FakeUploadRequest);
  FakeUploadRequest.last = undefined;
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe("the files panel", () => {
  it("offers its owner an upload and a download, and staff a download only", async () => {
    const owner = await renderComponent(<FilesPanel session={session} />, {
      me: aUser({ username: "alice" }),
    });
    await expect.element(owner.getByRole("heading", { name: "Upload into the home folder" })).toBeVisible();
    await expect.element(owner.getByRole("heading", { name: "Download from the home folder" })).toBeVisible();
    owner.unmount();

    const staff = await renderComponent(<FilesPanel session={session} />, {
      me: aUser({ username: "tom", role: "ta" }),
    });
    await expect.element(staff.getByText(/Each download is recorded in the audit log/)).toBeVisible();
    await expect.element(staff.getByRole("heading", { name: "Download from the home folder" })).toBeVisible();
    expect(staff.getByRole("heading", { name: "Upload into the home folder" }).query()).toBeNull();
  });

  it("is not there for another student, nor while the VM is not running", async () => {
    const other = await renderComponent(<FilesPanel session={session} />, { me: aUser({ username: "bob" }) });
    expect(other.container.textContent).toBe("");
    other.unmount();

    const starting = await renderComponent(<FilesPanel session={aSession({ status: "starting" })} />);
    expect(starting.container.textContent).toBe("");
  });

  it("uploads the chosen file under the name asked for, with its progress, then says what it saved", async () => {
    const screen = await renderComponent(<FilesPanel session={session} />);
    const upload = screen.getByRole("button", { name: "Upload" });
    await expect.element(upload).toBeDisabled();

    await userEvent.upload(screen.getByLabelText("File", { exact: true }), [
      new File(["x".repeat(2048)], "report.txt"),
    ]);
    await expect.element(screen.getByText("report.txt", { exact: true })).toBeVisible();
    await userEvent.fill(screen.getByRole("textbox", { name: /Save as/ }), "lab1/report.txt");
    await upload.click();

    await vi.waitFor(() => expect(FakeUploadRequest.last?.body).toBeInstanceOf(File));
    const request = FakeUploadRequest.last!;
    expect(request.method).toBe("PUT");
    expect(request.url).toBe("/api/sessions/s-1/files?path=lab1%2Freport.txt");
    await expect.element(upload).toBeDisabled();

    request.progress(1024, 2048);
    const progress = screen.getByRole("progressbar", { name: "Upload progress" });
    await expect.element(progress).toHaveAttribute("value", "50");

    request.respond(200, { path: "lab1/report.txt", bytes: 2048 } satisfies UploadedFile);
    await expect.element(screen.getByText("Uploaded lab1/report.txt (2 KiB).")).toBeVisible();
    await expect.element(progress).toHaveAttribute("value", "100");
    await expect.element(upload).toBeEnabled();
  });

  it("says why the server refused an upload", async () => {
    const screen = await renderComponent(<FilesPanel session={session} />);
    await userEvent.upload(screen.getByLabelText("File", { exact: true }), [new File(["data"], "big.bin")]);
    await screen.getByRole("button", { name: "Upload" }).click();
    await vi.waitFor(() => expect(FakeUploadRequest.last).toBeDefined());

    FakeUploadRequest.last!.respond(507, errorBody("disk_full", "The disk is full."));
    await expect
      .element(screen.getByRole("alert"))
      .toHaveTextContent("The VM's disk is full. Delete some files in the VM, then try again.");
  });

  it("says so when an upload breaks off", async () => {
    const screen = await renderComponent(<FilesPanel session={session} />);
    await userEvent.upload(screen.getByLabelText("File", { exact: true }), [new File(["data"], "a.txt")]);
    await screen.getByRole("button", { name: "Upload" }).click();
    await vi.waitFor(() => expect(FakeUploadRequest.last).toBeDefined());

    FakeUploadRequest.last!.breakOff();
    await expect
      .element(screen.getByRole("alert"))
      .toHaveTextContent("The transfer broke off before it finished. Try again.");
  });

  it("refuses a file over the limit before a byte is sent, and shows no progress for it", async () => {
    const screen = await renderComponent(<FilesPanel session={session} />);
    // Handed to the input in the page: a person's choice would ship the whole file to the browser
    // through Playwright, seconds for 32 MiB.
    const input = screen.getByLabelText("File", { exact: true }).element() as HTMLInputElement;
    const chosen = new DataTransfer();
    chosen.items.add(new File([new Uint8Array(fileLimits.maxBytes + 1)], "disk.img"));
    input.files = chosen.files;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    await screen.getByRole("button", { name: "Upload" }).click();

    await expect
      .element(screen.getByRole("alert"))
      .toHaveTextContent("The file is too large: files up to 32 MiB can be moved.");
    expect(FakeUploadRequest.last).toBeUndefined();
    expect(screen.getByRole("progressbar").query()).toBeNull();
  });

  it("downloads a file with its progress and hands it to the browser under its own name", async () => {
    const answer = streamedAnswer(3000);
    const fetch = vi.spyOn(window, "fetch").mockResolvedValue(answer.response);
    const saved: { name: string; href: string }[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
      saved.push({ name: this.download, href: this.href });
    });
    const screen = await renderComponent(<FilesPanel session={session} />);
    const download = screen.getByRole("button", { name: "Download" });
    await expect.element(download).toBeDisabled();

    await userEvent.fill(
      screen.getByRole("textbox", { name: "Path in the home folder", exact: true }),
      " notes/lab1.txt ",
    );
    await download.click();
    expect(fetch.mock.calls[0]?.[0]).toBe("/api/sessions/s-1/files?path=notes%2Flab1.txt");

    answer.send(1500);
    const progress = screen.getByRole("progressbar", { name: "Download progress" });
    await expect.element(progress).toHaveAttribute("value", "50");
    await expect.element(download).toBeDisabled();

    answer.send(1500);
    answer.end();
    await expect.element(screen.getByText("Downloaded notes/lab1.txt (3 KiB).")).toBeVisible();
    expect(saved).toEqual([{ name: "lab1.txt", href: expect.stringMatching(/^blob:/) }]);
  });

  it("says why a download was refused", async () => {
    vi.spyOn(window, "fetch").mockResolvedValue(
      Response.json(errorBody("no_such_file", "No such file.", { path: "nope.txt" }), { status: 404 }),
    );
    const screen = await renderComponent(<FilesPanel session={session} />);
    await userEvent.fill(
      screen.getByRole("textbox", { name: "Path in the home folder", exact: true }),
      "nope.txt",
    );
    await screen.getByRole("button", { name: "Download" }).click();

    await expect
      .element(screen.getByRole("alert"))
      .toHaveTextContent("There is no file nope.txt in the home folder. Check its name and folder.");
    expect(screen.getByRole("progressbar").query()).toBeNull();
  });

  it("says so when a download ends short of its size, keeping the progress it made", async () => {
    const answer = streamedAnswer(4096);
    vi.spyOn(window, "fetch").mockResolvedValue(answer.response);
    const screen = await renderComponent(<FilesPanel session={session} />);
    await userEvent.fill(
      screen.getByRole("textbox", { name: "Path in the home folder", exact: true }),
      "big.log",
    );
    await screen.getByRole("button", { name: "Download" }).click();

    answer.send(1024);
    answer.end();
    await expect
      .element(screen.getByRole("alert"))
      .toHaveTextContent("The transfer broke off before it finished. Try again.");
    await expect
      .element(screen.getByRole("progressbar", { name: "Download progress" }))
      .toHaveAttribute("value", "25");
  });
});
