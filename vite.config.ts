import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: "dist/web",
    // No source maps in the build: the server would hand them to anyone who asks.
    sourcemap: false,
    rolldownOptions: {
      output: {
        // Everything the entry imports statically in one chunk. Left to itself the bundler cuts out
        // every module a lazy page shares with it: a dozen more requests for the first page, and more
        // bytes, since each small file is compressed on its own.
        codeSplitting: { groups: [{ name: "index", tags: ["$initial"] }] },
      },
    },
  },
});
