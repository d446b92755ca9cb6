// Builds the dashboard into dist/: one bundled script and stylesheet plus index.html.
// No external URLs: everything the page loads comes from the daemon serving dist/.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';

const dir = new URL('.', import.meta.url).pathname;
rmSync(`${dir}dist`, { recursive: true, force: true });
mkdirSync(`${dir}dist`, { recursive: true });
await esbuild.build({
  entryPoints: [`${dir}src/main.ts`],
  bundle: true,
  minify: true,
  sourcemap: true,
  format: 'esm',
  target: ['es2020'],
  outdir: `${dir}dist`,
  logLevel: 'warning',
});
copyFileSync(`${dir}index.html`, `${dir}dist/index.html`);
copyFileSync(`${dir}favicon.svg`, `${dir}dist/favicon.svg`);
console.log('built web/dist');
