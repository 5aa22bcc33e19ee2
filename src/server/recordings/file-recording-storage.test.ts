// The recording storage contract on a real folder (DATA_DIR/recordings).
import path from "node:path";
import { repositoryInFreshFolder } from "../db/testing/repository-harness.ts";
import { FileRecordingStorage } from "./file-recording-storage.ts";
import { describeRecordingStorageContract } from "./testing/storage-contract.ts";

describeRecordingStorageContract("files", () =>
  repositoryInFreshFolder((dataDir) => new FileRecordingStorage(path.join(dataDir, "recordings"))),
);
