// Vite settings of the web console. The server serves the output at /console/: hashed files under
// assets/ are cached for good, index.html is revalidated on every load.
import { defineConfig } from "vite";

export default defineConfig({
  base: "/console/",
  esbuild: { jsx: "automatic" },
  build: {
    outDir: "dist/web",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // The whole app is one small chunk plus React; no inline scripts, so the server's CSP needs no 'unsafe-inline'.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
