import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { expect, test } from "./fixtures.ts";
import { FilesPanel } from "./pages/files-panel.ts";
import { expectAccessible } from "./support/accessibility.ts";

test("a student uploads a file from the session page, sees its progress, and downloads it back", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);
  const page = await pageAs("alice");
  const files = new FilesPanel(page);
  await files.goto(session.id);

  // The page's own words, not the browser's "Choose File / No file chosen".
  await expect(files.upload).toContainText("Choose a file…No file chosen");
  const data = randomBytes(3 * 1024 * 1024);
  await files.upload.getByLabel("File", { exact: true }).setInputFiles({
    name: "results.bin",
    mimeType: "application/octet-stream",
    buffer: data,
  });
  await expect(files.upload).toContainText("Choose a file…results.bin");
  await files.upload.getByRole("button", { name: "Upload" }).click();
  const uploadProgress = files.upload.getByRole("progressbar", { name: "Upload progress" });
  await expect(uploadProgress).toBeVisible();
  await expect(files.upload.getByRole("status")).toHaveText("Uploaded results.bin (3 MiB).");
  await expect(uploadProgress).toHaveAttribute("value", "100");
  await expect(files.upload).toContainText("100% · 3 MiB / 3 MiB");
  await expectAccessible(page, "session page with a finished upload");

  await files.download.getByLabel("Path in the home folder").fill("results.bin");
  const saved = page.waitForEvent("download");
  await files.download.getByRole("button", { name: "Download" }).click();
  const download = await saved;
  expect(download.suggestedFilename()).toBe("results.bin");
  expect((await readFile(await download.path())).equals(data)).toBe(true);
  await expect(files.download.getByRole("status")).toHaveText("Downloaded results.bin (3 MiB).");
  await expect(files.download.getByRole("progressbar", { name: "Download progress" })).toHaveAttribute(
    "value",
    "100",
  );

  // A file that is not there: said plainly, next to the form.
  await files.download.getByLabel("Path in the home folder").fill("missing.txt");
  await files.download.getByRole("button", { name: "Download" }).click();
  await expect(files.download.getByRole("alert")).toHaveText(
    "There is no file missing.txt in the home folder. Check its name and folder.",
  );
  // Nothing moved: no "0% · 0 B / 0 B" bar above the reason.
  await expect(files.download.getByRole("progressbar")).toBeHidden();
});
