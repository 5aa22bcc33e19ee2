import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  // No source maps in the build: the server would hand them to anyone who asks.
  build: { outDir: "dist/web", sourcemap: false },
});
