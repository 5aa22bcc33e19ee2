// Where the real cluster's inputs and its cache are in the checkout.
import path from "node:path";

export const projectRoot = path.resolve(import.meta.dirname, "../..");

/** cluster/real-apiserver: the Go program that runs etcd and kube-apiserver. */
export const goModuleDir = path.join(projectRoot, "cluster", "real-apiserver");

/** The built binaries and the logs; .lab/ is ignored by git. */
export const cacheDir = path.join(projectRoot, ".lab", "real-apiserver");
