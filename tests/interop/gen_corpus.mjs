#!/usr/bin/env node
// gen_corpus.mjs OUT_DIR [--filter SUBSTR] [--small]
//
// Writes Parquet files with three independent writers into OUT_DIR, and for each file
//   <name>.parquet        the file
//   <name>.expected.json  its values in canonical form (lib/canonical.mjs), dumped by the tool that wrote it
// plus OUT_DIR/manifest.json: [{ file, writer, dumped_by, cross_checked_by: [...], notes }].
// Every file is also read back by a second (and where possible a third) implementation and the canonical dumps
// must agree; a disagreement fails the script (exit 1). A second reader that cannot read a file at all (its own
// limitation, e.g. DuckDB and the Hadoop LZ4 codec) is recorded in the manifest as not_readable_by.
//
// Writers: DuckDB (@duckdb/node-api), parquet-rs (parquet-wasm + apache-arrow), hyparquet-writer.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DUMPERS } from './lib/readers.mjs';
import { diffDumps, stringify } from './lib/canonical.mjs';
import { duckdbCases } from './lib/cases_duckdb.mjs';
import { wasmCases } from './lib/cases_wasm.mjs';
import { hyparquetCases } from './lib/cases_hyparquet.mjs';

const args = process.argv.slice(2);
const outDir = args[0];
if (!outDir) { console.error('usage: gen_corpus.mjs OUT_DIR [--filter SUBSTR]'); process.exit(2); }
const filter = args.includes('--filter') ? args[args.indexOf('--filter') + 1] : '';
mkdirSync(outDir, { recursive: true });

const cases = [...duckdbCases(), ...wasmCases(), ...hyparquetCases()].filter(c => c.name.includes(filter));
const manifest = [];
let failures = 0;
const t0 = Date.now();
for (const c of cases) {
  const file = join(outDir, `${c.name}.parquet`);
  await c.write(file);
  const primary = await DUMPERS[c.dumpWith](file);
  writeFileSync(join(outDir, `${c.name}.expected.json`), stringify(primary));
  const checked = [];
  const unreadable = {};
  for (const other of c.crossCheck) {
    let dump;
    try {
      dump = await DUMPERS[other](file);
    } catch (e) {
      // The second reader's own limitation (recorded, not a failure): values are still checked by the others.
      unreadable[other] = String(e?.message ?? e).split('\n')[0];
      console.error(`[gen] note: ${other} cannot read ${c.name}: ${unreadable[other]}`);
      continue;
    }
    const known = c.knownDivergences?.[other] ?? [];
    const diffs = diffDumps(primary, dump, 10, known);
    if (diffs.length) {
      failures++;
      console.error(`[gen] ${c.name}: ${c.dumpWith} and ${other} disagree:\n  ${diffs.join('\n  ')}`);
    } else checked.push(other);
  }
  manifest.push({ file: `${c.name}.parquet`, writer: c.writer, dumped_by: c.dumpWith, cross_checked_by: checked,
                  not_readable_by: unreadable,
                  known_divergences: c.knownDivergences ?? {}, notes: c.notes ?? '' });
}
writeFileSync(join(outDir, 'manifest.json'), JSON.stringify(manifest, null, 1));
console.error(`[gen] ${manifest.length} files in ${outDir} (${((Date.now() - t0) / 1000).toFixed(1)} s), ` +
              `${failures} cross-check failures`);
process.exit(failures ? 1 : 0);
