import { defineConfig } from 'vite';

/**
 * dist/edgewatch-agent.mjs: the agent and the libraries it uses (yaml) in one ES module that needs only
 * Node ≥ 20, to copy to a device. Not minified: an operator may have to read it there.
 */
export default defineConfig({
  root: import.meta.dirname,
  logLevel: 'warn',
  build: {
    ssr: '../main.ts',
    outDir: '../../../dist',
    emptyOutDir: false,
    target: 'node20',
    minify: false,
    sourcemap: false,
    rollupOptions: { output: { format: 'es', entryFileNames: 'edgewatch-agent.mjs', codeSplitting: false } },
  },
  ssr: { noExternal: true, target: 'node' },
});
