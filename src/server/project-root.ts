import path from "node:path";

/** The checkout (or the image's /app): deploy/, labs/ and dist/ are found from here. */
export const projectRoot = path.resolve(import.meta.dirname, "../..");
