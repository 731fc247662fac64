// The web UI's build: `npm run build:web` writes web/dist, which `leadrun serve` serves at `/`.
// For development, `vite --config web/vite.config.ts` serves the UI with hot reload and hands every API
// request to a leadrun on port 3000 (LEADRUN_URL to use another).
import react from '@vitejs/plugin-react';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const backend = process.env.LEADRUN_URL ?? 'http://localhost:3000';

/**
 * Each script and style sheet of the build also compressed, as NAME.br and NAME.gz beside it, which `leadrun serve`
 * sends to a browser that accepts them (src/http/ui/web-app.ts): the app's script is a quarter of its size in Brotli.
 * Compressed once here, at the highest levels, rather than for each answer.
 */
function precompressed(): Plugin {
  return {
    name: 'leadrun-precompressed',
    apply: 'build',
    writeBundle(options, bundle) {
      for (const file of Object.keys(bundle)) {
        if (!/\.(js|css)$/.test(file)) continue;
        const full = path.join(options.dir ?? path.join(root, 'dist'), file);
        const data = readFileSync(full);
        writeFileSync(`${full}.br`, brotliCompressSync(data, {
          params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
        }));
        writeFileSync(`${full}.gz`, gzipSync(data, { level: constants.Z_BEST_COMPRESSION }));
      }
    },
  };
}

export default defineConfig({
  root,
  base: '/',
  plugins: [react(), precompressed()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Everything the page needs is a file under /assets/: no inline script or style, for a strict CSP.
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  server: {
    proxy: {
      '/api': { target: backend, changeOrigin: false },
      '/ui/api': { target: backend, changeOrigin: false },
    },
  },
});
