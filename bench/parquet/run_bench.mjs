#!/usr/bin/env node
// bench/parquet/run_bench.mjs [--bin PATH] [--dir DIR] [--reps N] [--threads 1,2] [--only SUBSTR[,SUBSTR...]] [--fresh]
//                             [--bytes dictionary|views|copied] [--no-mmap]
//
// Parquet scan throughput, lakerun vs DuckDB, on the same files in one run:
//   1. writes the benchmark files (once; kept in DIR): DuckDB writes the table shapes of reference data.md §6
//      (dense 2 M x 8 float32 + int64 label with snappy / zstd / V2 encodings, 60 k x 784-byte blobs, LIST<FLOAT>,
//      nullable columns, dictionary strings); lakerun's writer adds the dense table as PLAIN+snappy and as
//      BYTE_STREAM_SPLIT+zstd page v2 (parquet_scan_bench write);
//   2. for 1 and 2 threads, scans every file with lakerun (parquet_scan_bench scan: decode every chunk into memory
//      reused per thread, or a fresh ColumnData per chunk with --fresh; fold every value) and with DuckDB (SET threads=N; SELECT sum(num) / sum(strlen(str)) / sum(octet_length(blob)) /
//      sum(list_sum(list)) over every column: every value decoded and aggregated, one small result row);
//      strings and blobs: DuckDB's scan keeps them as string_t views into its decoded page buffers and keeps
//      dictionary-encoded chunks as dictionary vectors; lakerun reads them in the matching form by default
//      (--bytes dictionary: ColumnReadOptions{byte_views, dictionary}: views into the pages, indices + dictionary
//      for all-dictionary chunks); --bytes views expands dictionaries to one view per value, --bytes copied copies
//      every value out of the pages (the default ReadColumnChunk layout); lakerun maps the files
//      (ReaderOptions::memory_map) unless --no-mmap, which reads each chunk with pread as DuckDB does;
//   3. prints rows/s, decoded GB/s and the ratio DuckDB time / lakerun time (> 1: lakerun faster), best of N runs
//      after a warm-up (median in parentheses); the least CPU time (user + system, all threads, of the lakerun
//      process and of this Node process that hosts DuckDB) with its ratio and GB per CPU-second, which varies much
//      less than wall time on a machine shared with other work; and whether both engines' checksums agree.
// "Decoded bytes" = values x width + string/blob payload bytes (no offsets, no validity), counted by lakerun.
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(ROOT, 'tests/interop/package.json'));
const { DuckDBInstance } = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const reps = Number(opt('--reps', '7'));
const threadList = opt('--threads', '1,2').split(',').map(Number);
const only = opt('--only', '');
const dir = resolve(opt('--dir', '/tmp/lakerun-parquet-bench'));
const bytesForm = opt('--bytes', 'dictionary');
const BYTES_FORMS = {
  dictionary: 'views into the decoded pages; all-dictionary chunks as indices + dictionary (as DuckDB keeps them)',
  views: 'views into the decoded pages; dictionaries expanded to one view per value',
  copied: 'every value copied out of the pages into offsets + bytes; dictionaries expanded',
};
if (!(bytesForm in BYTES_FORMS)) throw new Error(`--bytes must be one of ${Object.keys(BYTES_FORMS).join(', ')}`);
function findBin() {
  for (const b of readdirSync(ROOT).filter(d => d.startsWith('build'))) {
    const p = join(ROOT, b, 'bench/parquet/parquet_scan_bench');
    if (existsSync(p)) return p;
  }
  throw new Error('parquet_scan_bench not built; build the target or pass --bin');
}
const bin = opt('--bin', null) ?? findBin();
mkdirSync(dir, { recursive: true });

const con = await (await DuckDBInstance.create(':memory:')).connect();
const floats = Array.from({ length: 8 }, (_, c) => `random()::FLOAT AS f${c}`).join(', ');
const DUCK_FILES = {
  a_dense_snappy: [`SELECT ${floats}, (i % 1000)::BIGINT AS label FROM range(2000000) t(i)`, 'COMPRESSION snappy'],
  b_dense_zstd: [`SELECT ${floats}, (i % 1000)::BIGINT AS label FROM range(2000000) t(i)`, 'COMPRESSION zstd'],
  g_dense_v2_zstd: [`SELECT ${floats}, (i % 1000)::BIGINT AS label FROM range(2000000) t(i)`,
                    'COMPRESSION zstd, PARQUET_VERSION V2'],
  c_mnist_blob_snappy: [`SELECT unhex(repeat('00', 312) || ${Array.from({ length: 10 }, (_, k) => `md5(i::VARCHAR || '${k}')`).join(' || ')}
                         || repeat('00', 312)) AS image, (i % 10)::INTEGER AS label FROM range(60000) t(i)`,
                        'COMPRESSION snappy, ROW_GROUP_SIZE 100000'],
  d_list_float_snappy: [`SELECT [random()::FLOAT FOR x IN range(1 + (i % 64))] AS vals FROM range(200000) t(i)`,
                        'COMPRESSION snappy'],
  e_nullable_snappy: [`SELECT CASE WHEN random() < 0.1 THEN NULL ELSE i END::BIGINT AS a,
                        CASE WHEN random() < 0.1 THEN NULL ELSE random() END::DOUBLE AS b,
                        CASE WHEN random() < 0.1 THEN NULL ELSE random() END::FLOAT AS c,
                        CASE WHEN random() < 0.1 THEN NULL ELSE (i % 100000) END::INTEGER AS d,
                        CASE WHEN random() < 0.1 THEN NULL ELSE 'user_' || (i % 50000)::VARCHAR END AS e
                       FROM range(2000000) t(i)`, 'COMPRESSION snappy'],
  f_dict_strings_snappy: [`SELECT 'category_' || (i % 1000)::VARCHAR AS cat, md5(i::VARCHAR) AS hi_card,
                           (i % 1000)::BIGINT AS label FROM range(2000000) t(i)`, 'COMPRESSION snappy'],
};

const files = [];
await con.run('SELECT setseed(0.42)');
for (const [name, [sql, copy]] of Object.entries(DUCK_FILES)) {
  const path = join(dir, `${name}.parquet`);
  if (!existsSync(path)) await con.run(`COPY (${sql}) TO '${path}' (FORMAT parquet, ${copy})`);
  files.push(path);
}
if (!existsSync(join(dir, 'lakerun_dense_plain_snappy.parquet')) || !existsSync(join(dir, 'lakerun_dense_v2_bss_zstd.parquet'))) {
  execFileSync(bin, ['write', dir], { stdio: 'inherit', timeout: 600000 });
}
files.push(join(dir, 'lakerun_dense_plain_snappy.parquet'), join(dir, 'lakerun_dense_v2_bss_zstd.parquet'));
const selected = files.filter(f => only.split(',').some(o => f.split('/').at(-1).includes(o)));

async function duckQuery(path) {
  const desc = (await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`)).getRowObjectsJS();
  const exprs = desc.map(({ column_name: c, column_type: t }) => {
    const q = `"${c}"`;
    if (t === 'VARCHAR') return `sum(strlen(${q}))::DOUBLE`;
    if (t === 'BLOB') return `sum(octet_length(${q}))::DOUBLE`;
    if (t.endsWith('[]')) return `sum(list_sum(${q}))::DOUBLE`;
    return `sum(${q})::DOUBLE`;
  });
  return `SELECT ${exprs.join(', ')} FROM read_parquet('${path}')`;
}

async function duckScan(path) {
  const sql = await duckQuery(path);
  let checksum = 0;
  const cpu = [];
  const once = async () => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await con.runAndReadAll(sql);
    const dt = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1e6);
    checksum = r.getRowsJS()[0].reduce((s, v) => s + Number(v ?? 0), 0);
    return dt;
  };
  await once();
  const times = [];
  for (let i = 0; i < reps; i++) times.push(await once());
  times.sort((a, b) => a - b);
  cpu.shift();   // the warm-up
  cpu.sort((a, b) => a - b);
  return { best_s: times[0], median_s: times[Math.floor(times.length / 2)], cpu_s: cpu[0], checksum };
}

const fmt = (x, d = 1) => x.toFixed(d).padStart(7);
console.log(`lakerun vs DuckDB Parquet scan — best of ${reps} after a warm-up (median in parentheses); ` +
            `ratio = DuckDB time / lakerun time (> 1.00: lakerun faster)`);
console.log(`files in ${dir}; lakerun: ${bin}`);
const mmap = !args.includes('--no-mmap');
console.log(`strings/blobs — lakerun (--bytes ${bytesForm}): ${BYTES_FORMS[bytesForm]}; DuckDB: string_t views ` +
            `into its page buffers, dictionary vectors for dictionary-encoded chunks`);
console.log(`file access — lakerun: ${mmap ? 'memory-mapped (ReaderOptions::memory_map; --no-mmap: pread)' :
            'pread of each column chunk'}; DuckDB: pread`);
for (const threads of threadList) {
  const out = execFileSync(bin, ['scan', '--threads', String(threads), '--reps', String(reps),
                                  '--bytes', bytesForm, ...(mmap ? ['--mmap'] : []),
                                  ...(args.includes('--fresh') ? ['--fresh'] : []), ...selected],
                           { encoding: 'utf8', timeout: 600000, maxBuffer: 1 << 24 });
  const lake = Object.fromEntries(out.trim().split('\n').map(l => JSON.parse(l)).map(r => [r.file, r]));
  await con.run(`SET threads = ${threads}`);
  console.log(`\n== ${threads} thread(s) ==`);
  console.log('file                           rows file MB dec. MB |   lakerun s (median)  Mrow/s   GB/s |    DuckDB s (median)  Mrow/s   GB/s | ratio | CPU s: lakerun  DuckDB  ratio  GB/CPU-s: lakerun DuckDB | checksums');
  for (const f of selected) {
    const l = lake[f];
    const d = await duckScan(f);
    const gb = l.decoded_bytes / 1e9;
    const agree = Math.abs(l.checksum - d.checksum) <= 1e-6 * Math.max(1, Math.abs(d.checksum)) ? 'agree' :
      `DIFFER (${l.checksum} vs ${d.checksum})`;
    const name = f.split('/').at(-1).replace('.parquet', '');
    console.log(`${name.padEnd(27)} ${String(l.rows).padStart(8)} ${fmt(statSync(f).size / 1e6)} ${fmt(gb * 1e3)}    |` +
      ` ${fmt(l.best_s, 3)} (${l.median_s.toFixed(3)}) ${fmt(l.rows / l.best_s / 1e6)} ${fmt(gb / l.best_s, 2)} |` +
      ` ${fmt(d.best_s, 3)} (${d.median_s.toFixed(3)}) ${fmt(l.rows / d.best_s / 1e6)} ${fmt(gb / d.best_s, 2)} |` +
      ` ${(d.best_s / l.best_s).toFixed(2).padStart(5)} |` +
      `        ${fmt(l.cpu_s, 3)} ${fmt(d.cpu_s, 3)} ${(d.cpu_s / l.cpu_s).toFixed(2).padStart(6)}` +
      `            ${fmt(gb / l.cpu_s, 2)} ${fmt(gb / d.cpu_s, 2)} | ${agree}`);
  }
}
