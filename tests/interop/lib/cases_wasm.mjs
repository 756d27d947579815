// Files written by parquet-rs (Rust, via parquet-wasm) from Arrow tables built with apache-arrow: writer version 1
// (DATA_PAGE) and 2 (DATA_PAGE_V2, where incompressible pages are stored with is_compressed=false), every codec
// including the deprecated Hadoop-framed LZ4, per-column encodings (DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY,
// DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT, RLE booleans), dictionary fallback part-way through a chunk, small pages,
// list element `item`, map group `entries`, structs, ns timestamps with a time zone, decimals, fixed-size binary.
import { writeFileSync } from 'node:fs';
import * as pw from 'parquet-wasm';
import {
  Table, tableToIPC, vectorFromArray, makeVector, Field, List, Struct, Map_, Utf8, Binary, Bool, Float32, Float64,
  Int8, Int16, Int32, Uint8, Uint16, Uint32, Uint64, Int64, DateDay, TimestampNanosecond, TimestampMillisecond,
  TimestampMicrosecond, FixedSizeBinary, Decimal, TimeMicrosecond,
} from 'apache-arrow';

function rng(seed) {   // xorshift32: deterministic pseudo-random numbers
  let x = seed >>> 0 || 1;
  return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 4294967296; };
}

function nullEvery(k, n, f) { return Array.from({ length: n }, (_, i) => (i % k === 3 ? null : f(i))); }

export function buildTable(n) {
  const r = rng(42);
  const floats = Float32Array.from({ length: n }, () => r() * 2 - 1);   // random: incompressible -> is_compressed=false
  const decimals = Array.from({ length: n }, (_, i) => {
    // Decimal128 values as 4 little-endian 32-bit words (two's complement).
    let v = BigInt(i) * 1000003n - 50000000n;
    if (i % 7 === 3) return null;
    const out = new Uint32Array(4);
    let u = BigInt.asUintN(128, v);
    for (let w = 0; w < 4; w++) { out[w] = Number(u & 0xffffffffn); u >>= 32n; }
    return out;
  });
  return new Table({
    id: makeVector(BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 3n - 1000n)),
    i8: vectorFromArray(nullEvery(7, n, i => (i % 256) - 128), new Int8()),
    i16: vectorFromArray(nullEvery(7, n, i => (i * 37 % 65536) - 32768), new Int16()),
    i32: vectorFromArray(nullEvery(7, n, i => (i * 2654435761 % 4294967296) - 2147483648), new Int32()),
    u8: vectorFromArray(nullEvery(7, n, i => i % 256), new Uint8()),
    u16: vectorFromArray(nullEvery(7, n, i => i * 37 % 65536), new Uint16()),
    u32: vectorFromArray(nullEvery(7, n, i => i * 2654435761 % 4294967296), new Uint32()),
    u64: vectorFromArray(nullEvery(7, n, i => BigInt(i) * 0x9E3779B97F4A7C15n % (1n << 64n)), new Uint64()),
    i64d: vectorFromArray(nullEvery(7, n, i => BigInt(i) * BigInt(i) - 7n), new Int64()),
    f32: makeVector(floats),
    nf32: vectorFromArray(nullEvery(7, n, i => (i % 50 === 1 ? NaN : i % 50 === 2 ? -Infinity : floats[i])), new Float32()),
    f64: vectorFromArray(nullEvery(5, n, i => i / 3 - 1e9), new Float64()),
    b: vectorFromArray(nullEvery(7, n, i => i % 3 === 0), new Bool()),
    // Dictionary candidates: 40 repeated values, then unique values, so the dictionary overflows part-way.
    s: vectorFromArray(nullEvery(7, n, i => (i < n / 4 ? `cat_${i % 40}` : `unique_${i}_${'z'.repeat(i % 13)}`)), new Utf8()),
    sdelta: vectorFromArray(nullEvery(7, n, i => `prefix/common/path/${String(i).padStart(6, '0')}.bin`), new Utf8()),
    bin: vectorFromArray(nullEvery(7, n, i => Uint8Array.from({ length: i % 9 }, (_, k) => (i * 31 + k) & 255)), new Binary()),
    fsb: vectorFromArray(nullEvery(7, n, i => Uint8Array.from({ length: 16 }, (_, k) => (i * 7 + k * 13) & 255)), new FixedSizeBinary(16)),
    dt: vectorFromArray(nullEvery(7, n, i => (i * 13 % 40000 - 20000) * 86400000), new DateDay()),
    ts_ns_tz: makeVector({ type: new TimestampNanosecond('UTC'), data: BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 1000000007n - 1n), length: n }),
    ts_ms: makeVector({ type: new TimestampMillisecond(), data: BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 86400123n), length: n }),
    ts_us_tz: makeVector({ type: new TimestampMicrosecond('Europe/Paris'), data: BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 3600000001n), length: n }),
    tm_us: makeVector({ type: new TimeMicrosecond(), data: BigInt64Array.from({ length: n }, (_, i) => BigInt(i * 7919123 % 86400000) * 1000n), length: n }),
    dec: vectorFromArray(decimals, new Decimal(2, 22, 128)),
    lf: vectorFromArray(Array.from({ length: n }, (_, i) => (i % 11 === 0 ? null : Array.from({ length: i % 6 }, (_, k) => (k === 2 && i % 4 === 0 ? null : i + k / 4)))),
                        new List(new Field('item', new Float32(), true))),
    llf: vectorFromArray(Array.from({ length: n }, (_, i) => (i % 13 === 0 ? null : [[i], [], i % 2 ? null : [i + 0.5, -i]])),
                         new List(new Field('item', new List(new Field('item', new Float64(), true)), true))),
    st: vectorFromArray(Array.from({ length: n }, (_, i) => (i % 9 === 0 ? null : { x: i % 4 === 1 ? null : i, y: `v${i}` })),
                        new Struct([new Field('x', new Int32(), true), new Field('y', new Utf8(), true)])),
    mp: vectorFromArray(Array.from({ length: n }, (_, i) => (i % 4 === 0 ? null : new Map(i % 4 === 1 ? [] : [[`k${i % 3}`, BigInt(i)], ['z', i % 8 === 2 ? null : BigInt(-i)]]))),
                        new Map_(new Field('entries', new Struct([new Field('key', new Utf8(), false), new Field('value', new Int64(), true)]), false))),
  });
}

const ENCODED = { id: 'DELTA_BINARY_PACKED', i32: 'DELTA_BINARY_PACKED', i64d: 'DELTA_BINARY_PACKED',
  sdelta: 'DELTA_BYTE_ARRAY', bin: 'DELTA_LENGTH_BYTE_ARRAY', f32: 'BYTE_STREAM_SPLIT', f64: 'BYTE_STREAM_SPLIT',
  b: 'RLE', fsb: 'DELTA_BYTE_ARRAY' };

export function writeWasm(path, table, { version = 2, codec = 'SNAPPY', encodings = false, pageBytes = 0,
  dictionary = true, dictPageBytes = 0, rowGroupRows = 0 } = {}) {
  let b = new pw.WriterPropertiesBuilder()
    .setWriterVersion(version === 2 ? pw.WriterVersion.V2 : pw.WriterVersion.V1)
    .setCompression(pw.Compression[codec])
    .setDictionaryEnabled(dictionary);
  if (pageBytes) b = b.setDataPageSizeLimit(pageBytes);
  if (dictPageBytes) b = b.setDictionaryPageSizeLimit(dictPageBytes);
  if (rowGroupRows) b = b.setMaxRowGroupSize(rowGroupRows);
  if (encodings) {
    for (const [col, enc] of Object.entries(ENCODED)) {
      b = b.setColumnEncoding(col, pw.Encoding[enc]).setColumnDictionaryEnabled(col, false);
    }
  }
  const bytes = pw.writeParquet(pw.Table.fromIPCStream(tableToIPC(table, 'stream')), b.build());
  writeFileSync(path, bytes);
}

export function wasmCases(n = 2500) {
  const cases = [];
  let table = null;
  const t = () => (table ??= buildTable(n));
  const mk = (name, opts, crossCheck = ['duckdb', 'hyparquet'], notes = '') => ({
    name, writer: 'parquet-rs', dumpWith: 'wasm', crossCheck, notes, write: path => writeWasm(path, t(), opts),
  });
  for (const version of [1, 2]) {
    for (const codec of ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'ZSTD', 'LZ4_RAW', 'LZ4']) {
      // DuckDB cannot read the deprecated Hadoop-framed LZ4 codec.
      const cross = codec === 'LZ4' ? ['hyparquet'] : ['duckdb', 'hyparquet'];
      cases.push(mk(`wasm_v${version}_${codec.toLowerCase()}`, { version, codec, pageBytes: 8192, rowGroupRows: 1000 },
                    cross, codec === 'LZ4' ? 'Hadoop-framed LZ4; DuckDB cannot read it' : ''));
    }
    cases.push(mk(`wasm_v${version}_encodings_zstd`, { version, codec: 'ZSTD', encodings: true, pageBytes: 4096 }));
    // A tiny dictionary limit: every dictionary column falls back mid-chunk (PLAIN in v1, DELTA_* in v2).
    cases.push(mk(`wasm_v${version}_dict_fallback`, { version, codec: 'SNAPPY', dictPageBytes: 512, pageBytes: 2048 }));
    cases.push(mk(`wasm_v${version}_nodict_uncompressed`, { version, codec: 'UNCOMPRESSED', dictionary: false }));
  }
  return cases;
}
