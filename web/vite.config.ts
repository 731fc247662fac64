// The web UI's build: `npm run build:web` writes web/dist, which `leadrun serve` serves at `/`.
// For development, `vite --config web/vite.config.ts` serves the UI with hot reload and hands every API
// request to a leadrun on port 3000 (LEADRUN_URL to use another).
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const backend = process.env.LEADRUN_URL ?? 'http://localhost:3000';

export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
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
