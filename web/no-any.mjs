// Fails the build on `any` in the files whose API answers are typed from the generated
// src/api-types.ts (openapi.json, the service's document): a new untyped answer there is an error.
import { readFileSync } from 'node:fs';

const TYPED = [
  'src/api.ts',
  'src/answers.ts',
  'src/presetpicker.ts',
  'src/pages/annotate.ts',
  'src/pages/characterise.ts',
  'src/pages/curves.ts',
  'src/pages/launch.ts',
  'src/pages/queue.ts',
  'src/pages/sensors.ts',
  'src/live.ts',
  'src/lockstep.ts',
  'src/pages/fitform.ts',
  'src/pages/models.ts',
  'src/pages/imported.ts',
  'src/dom.ts',
  'src/main.ts',
  'src/rangefield.ts',
  'src/specform.ts',
  'src/pages/bench.ts',
];
let bad = 0;
for (const file of TYPED) {
  readFileSync(new URL(file, import.meta.url), 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (/(:\s*any\b|<any>|\bas any\b|=\s*any\b|any\[\])/.test(line.replace(/\/\/.*$/, ''))) {
        console.error(`${file}:${i + 1}: \`any\` in a file typed from api-types.ts: ${line.trim()}`);
        bad++;
      }
    });
}
process.exit(bad ? 1 : 0);
