#!/usr/bin/env node
// dump.mjs TOOL FILE.parquet...     TOOL = duckdb | wasm | hyparquet
//
// Reads each file with TOOL and writes its canonical JSON (lib/canonical.mjs) to FILE.parquet.<TOOL>.json. A file
// the tool cannot read gets {"error": "<message>"} instead, and the exit status is 1 (the other files are still
// dumped), so a caller can report every failure at once.
import { writeFileSync } from 'node:fs';
import { DUMPERS } from './lib/readers.mjs';
import { stringify } from './lib/canonical.mjs';

const [tool, ...files] = process.argv.slice(2);
if (!DUMPERS[tool] || files.length === 0) {
  console.error(`usage: dump.mjs {${Object.keys(DUMPERS).join('|')}} FILE.parquet...`);
  process.exit(2);
}
let failed = 0;
for (const f of files) {
  let out;
  try {
    out = await DUMPERS[tool](f);
  } catch (e) {
    failed++;
    out = { error: String(e?.message ?? e) };
    console.error(`[dump] ${tool} cannot read ${f}: ${out.error}`);
  }
  writeFileSync(`${f}.${tool}.json`, stringify(out));
}
process.exit(failed ? 1 : 0);
