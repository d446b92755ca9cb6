// Fails the build on `any` in the dashboard's sources: API answers are typed from the generated
// src/api-types.ts (openapi.json, the service's document) or, where the document leaves one
// free-form, by hand (answers.ts, runrecord.ts); DOM helpers are generic. Every .ts file under
// src/ is checked (a new file too), but the generated api-types.ts.
import { readdirSync, readFileSync } from 'node:fs';

const src = new URL('src/', import.meta.url);
const files = readdirSync(src, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.ts') && f !== 'api-types.ts')
  .sort();
let bad = 0;
for (const file of files) {
  readFileSync(new URL(file, src), 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (/(:\s*any\b|<any>|\bas any\b|=\s*any\b|any\[\]|\bany>)/.test(line.replace(/\/\/.*$/, ''))) {
        console.error(`src/${file}:${i + 1}: \`any\` (type the value from api-types.ts, or unknown): ${line.trim()}`);
        bad++;
      }
    });
}
if (files.length < 30) {
  console.error(`no-any.mjs: only ${files.length} files under src/ (expected the dashboard's 30+)`);
  bad++;
}
process.exit(bad ? 1 : 0);
