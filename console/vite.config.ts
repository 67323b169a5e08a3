import { gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

/** The console's JavaScript must stay within this, gzipped. */
const JS_BUDGET_BYTES = 250 * 1024;

/** Prints the gzipped size of all the console's JavaScript after a build, and fails a build over budget. */
function javascriptBudget(): Plugin {
  return {
    name: 'edgewatch-javascript-budget',
    apply: 'build',
    generateBundle(_options, bundle) {
      let gzipped = 0;
      for (const file of Object.values(bundle)) {
        if (file.type === 'chunk') gzipped += gzipSync(file.code, { level: 9 }).length;
      }
      const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
      this.info(`console JavaScript: ${kb(gzipped)} gzipped (budget ${kb(JS_BUDGET_BYTES)})`);
      if (gzipped > JS_BUDGET_BYTES)
        this.error(`the console's JavaScript is over its ${kb(JS_BUDGET_BYTES)} budget`);
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react(), javascriptBudget()],
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    // No inline scripts or styles anywhere: the page is served with a strict Content-Security-Policy.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});
