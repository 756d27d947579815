#!/usr/bin/env node
// make_fuzz_seeds.mjs OUT_DIR
//
// Builds seed corpora for fuzz/parquet (one sub-directory per fuzz target, files named by their SHA-1) from small
// files written by DuckDB, parquet-rs and hyparquet-writer: whole files, footers, page headers, column chunks,
// compressed page bodies of every codec, and the value / level sections of uncompressed pages for each decoder,
// each with the parameter prefix its target expects (fuzz/parquet/fuzz_targets.cc). Every valid seed also gets
// damaged variants (truncated, one byte flipped, count inflated). Deterministic: the same packages give the same
// seeds. The corpus is committed; rerun this only to refresh it.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { parquetHeader } from 'hyparquet/src/column.js';
import { duckdbCases } from './lib/cases_duckdb.mjs';
import { wasmCases } from './lib/cases_wasm.mjs';
import { hyparquetCases } from './lib/cases_hyparquet.mjs';
import { readMetadata } from './lib/canonical.mjs';

const outDir = process.argv[2];
if (!outDir) { console.error('usage: make_fuzz_seeds.mjs OUT_DIR'); process.exit(2); }

const TYPE = { BOOLEAN: 0, INT32: 1, INT64: 2, INT96: 3, FLOAT: 4, DOUBLE: 5, BYTE_ARRAY: 6, FIXED_LEN_BYTE_ARRAY: 7 };
const CODEC = { UNCOMPRESSED: 0, SNAPPY: 1, GZIP: 2, LZO: 3, BROTLI: 4, LZ4: 5, ZSTD: 6, LZ4_RAW: 7 };
const TYPE_SUFFIX = { BOOLEAN: 'boolean', INT32: 'int32', INT64: 'int64', INT96: 'int96', FLOAT: 'float',
  DOUBLE: 'double', BYTE_ARRAY: 'byte_array', FIXED_LEN_BYTE_ARRAY: 'flba' };
const MAX_SEEDS = 10;       // valid seeds kept per target (smallest first, plus the largest)
const MAX_SEED_BYTES = 8 << 10;

const seeds = new Map();   // target -> Map(hash -> bytes)
function add(target, bytes) {
  bytes = Uint8Array.from(bytes);
  if (!seeds.has(target)) seeds.set(target, []);
  seeds.get(target).push(bytes);
}
const u16 = n => [n & 255, (n >> 8) & 255];
const u24 = n => [n & 255, (n >> 8) & 255, (n >> 16) & 255];
const cat = (...parts) => { const out = []; for (const p of parts) for (const b of p) out.push(b); return out; };

function levelsOf(schema, pathInSchema) {
  // max definition / repetition level of a leaf from the flat schema (root excluded)
  let pos = 1, def = 0, rep = 0;
  const children = [schema[0].num_children];
  let depth = 0;
  for (const name of pathInSchema) {
    // find child `name` at the current level
    let count = children[depth];
    let found = null;
    while (count-- > 0) {
      const el = schema[pos];
      if (el.name === name) { found = el; pos++; break; }
      pos = skip(schema, pos);
    }
    if (!found) throw new Error(`no ${name}`);
    if (found.repetition_type !== 'REQUIRED') def++;
    if (found.repetition_type === 'REPEATED') rep++;
    children[++depth] = found.num_children ?? 0;
  }
  return { def, rep };
}
function skip(schema, pos) {
  const n = schema[pos].num_children ?? 0;
  pos++;
  for (let i = 0; i < n; i++) pos = skip(schema, pos);
  return pos;
}
const bitWidth = max => (max === 0 ? 0 : 32 - Math.clz32(max));

function harvest(path) {
  const buf = readFileSync(path);
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length <= MAX_SEED_BYTES) add('file', bytes);
  const footerLen = view.getUint32(bytes.length - 8, true);
  add('footer', bytes.subarray(bytes.length - 8 - footerLen, bytes.length - 8));
  const md = readMetadata(path);
  for (const rg of md.row_groups) {
    for (const cc of rg.columns) {
      const m = cc.meta_data;
      const { def, rep } = levelsOf(md.schema, m.path_in_schema);
      const leaf = md.schema.find(e => e.name === m.path_in_schema.at(-1) && e.type === m.type);
      const typeLength = leaf?.type_length ?? 0;
      const start = Number(m.dictionary_page_offset ?? m.data_page_offset);
      const dpo = Number(m.data_page_offset);
      const chunkStart = m.dictionary_page_offset && Number(m.dictionary_page_offset) < dpo ? start : dpo;
      const chunkEnd = chunkStart + Number(m.total_compressed_size);
      const chunk = bytes.subarray(chunkStart, chunkEnd);
      add('column_chunk', cat([TYPE[m.type], typeLength & 255, def, rep, CODEC[m.codec]], chunk.subarray(0, MAX_SEED_BYTES)));
      let dictSize = 0;
      const reader = { view, offset: chunkStart };
      while (reader.offset < chunkEnd) {
        const headerStart = reader.offset;
        const h = parquetHeader(reader);
        const bodyStart = reader.offset;
        add('page_header', bytes.subarray(headerStart, bodyStart));
        const body = bytes.subarray(bodyStart, bodyStart + h.compressed_page_size);
        reader.offset = bodyStart + h.compressed_page_size;
        const v2 = h.data_page_header_v2;
        const levelBytes = v2 ? v2.definition_levels_byte_length + v2.repetition_levels_byte_length : 0;
        const compressed = body.subarray(levelBytes);
        const compressedFlag = v2 ? v2.is_compressed : true;
        if (m.codec !== 'UNCOMPRESSED' && compressedFlag && CODEC[m.codec] !== undefined) {
          add(`decompress_${m.codec.toLowerCase()}`, cat(u24(h.uncompressed_page_size - levelBytes), compressed));
        }
        if (m.codec !== 'UNCOMPRESSED') continue;   // decoder seeds come from uncompressed pages only
        if (h.dictionary_page_header) {
          dictSize = h.dictionary_page_header.num_values;
          addValues('PLAIN', m.type, typeLength, dictSize, body);
          continue;
        }
        let values, count;
        if (v2) {
          const repLen = v2.repetition_levels_byte_length, defLen = v2.definition_levels_byte_length;
          if (rep) add('rle_hybrid', cat([bitWidth(rep)], u16(v2.num_values), body.subarray(0, repLen)));
          if (def) add('rle_hybrid', cat([bitWidth(def)], u16(v2.num_values), body.subarray(repLen, repLen + defLen)));
          values = body.subarray(repLen + defLen);
          count = v2.num_values - v2.num_nulls;
        } else if (h.data_page_header) {
          let p = 0;
          for (const max of [rep, def]) {
            if (!max) continue;
            const len = new DataView(body.buffer, body.byteOffset + p, 4).getUint32(0, true);
            add('rle_hybrid', cat([bitWidth(max)], u16(h.data_page_header.num_values), body.subarray(p + 4, p + 4 + len)));
            p += 4 + len;
          }
          values = body.subarray(p);
          count = h.data_page_header.num_values;   // exact without nulls; an over-count (damaged seed) otherwise
        } else continue;
        const enc = (v2 ?? h.data_page_header).encoding;
        if (enc === 'RLE_DICTIONARY' || enc === 'PLAIN_DICTIONARY') {
          add('dict_indices', cat(u16(count), u16(dictSize), values));
        } else addValues(enc, m.type, typeLength, count, values);
      }
    }
  }
}

function addValues(encoding, type, typeLength, count, values) {
  const flba = type === 'FIXED_LEN_BYTE_ARRAY' ? [typeLength & 255] : [];
  switch (encoding) {
    case 'PLAIN': add(`plain_${TYPE_SUFFIX[type]}`, cat(u16(count), flba, values)); break;
    case 'RLE':   // v2 BOOLEAN values: 4-byte length, then the hybrid runs
      if (type === 'BOOLEAN') add('rle_hybrid', cat([1], u16(count), values.subarray(4)));
      break;
    case 'DELTA_BINARY_PACKED': add(`delta_binary_packed_${TYPE_SUFFIX[type]}`, cat(u16(count), values)); break;
    case 'DELTA_LENGTH_BYTE_ARRAY': add('delta_length_byte_array', cat(u16(count), values)); break;
    case 'DELTA_BYTE_ARRAY': if (type === 'BYTE_ARRAY') add('delta_byte_array', cat(u16(count), values)); break;
    case 'BYTE_STREAM_SPLIT': add(`byte_stream_split_${TYPE_SUFFIX[type]}`, cat(u16(count), flba, values)); break;
  }
}

// Small synthetic seeds for inputs no writer here produces (INT96; BYTE_STREAM_SPLIT of ints and FLBA).
function synthetic() {
  const int96 = Array.from({ length: 36 }, (_, i) => (i * 37) & 255);
  add('plain_int96', cat(u16(3), int96));
  add('byte_stream_split_int32', cat(u16(4), Array.from({ length: 16 }, (_, i) => i)));
  add('byte_stream_split_int64', cat(u16(2), Array.from({ length: 16 }, (_, i) => 255 - i)));
  add('byte_stream_split_flba', cat(u16(3), [5], Array.from({ length: 15 }, (_, i) => i * 3)));
  add('plain_flba', cat(u16(2), [3], [1, 2, 3, 4, 5, 6]));
  add('dict_indices', cat(u16(8), u16(3), [2, 0x03, 0x88, 0xc6, 0xfa]));
}

function damaged(target, b) {
  const out = [];
  if (b.length > 4) out.push(b.subarray(0, Math.floor(b.length / 2)));
  if (b.length > 8) { const f = Uint8Array.from(b); f[Math.floor(f.length * 0.6)] ^= 0x5a; out.push(f); }
  const prefix = { file: 0, footer: 0, page_header: 0, column_chunk: 0 }[target];
  if (prefix === undefined && !target.startsWith('decompress_') && b.length > 2) {
    const f = Uint8Array.from(b); f[1] = 0xff; out.push(f);   // count inflated far past the data
  }
  if (target.startsWith('decompress_') && b.length > 3) {
    const f = Uint8Array.from(b); f[2] = 0x7f; out.push(f);   // claims a much larger uncompressed size
  }
  return out;
}

const work = join(tmpdir(), `lakerun-seeds-${process.pid}`);
mkdirSync(work, { recursive: true });
try {
  const cases = [...duckdbCases(24, false).filter(c => /_(uncompressed|snappy|gzip|zstd|lz4_raw|brotli|nodict)$/.test(c.name)),
                 ...wasmCases(40), ...hyparquetCases(0.01)];
  for (const c of cases) {
    const f = join(work, `${c.name}.parquet`);
    await c.write(f);
    harvest(f);
  }
  synthetic();
  rmSync(outDir, { recursive: true, force: true });
  let total = 0;
  for (const [target, list] of [...seeds.entries()].sort()) {
    const dir = join(outDir, target);
    mkdirSync(dir, { recursive: true });
    const unique = new Map();
    for (const b of list) unique.set(createHash('sha1').update(b).digest('hex'), b);
    const valid = [...unique.values()].filter(b => b.length <= MAX_SEED_BYTES + 8).sort((a, b) => a.length - b.length);
    // keep the smallest few plus the largest one (large pages, long runs)
    const keep = valid.length > MAX_SEEDS ? [...valid.slice(0, MAX_SEEDS - 1), valid.at(-1)] : valid;
    const all = [...keep, ...keep.slice(0, 6).flatMap(b => damaged(target, b))];
    for (const b of all) {
      writeFileSync(join(dir, createHash('sha1').update(b).digest('hex')), b);
      total++;
    }
  }
  console.error(`[seeds] ${total} seeds for ${seeds.size} targets in ${outDir}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
