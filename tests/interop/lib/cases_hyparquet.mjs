// Files written by hyparquet-writer (pure JS). It writes DATA_PAGE_V2 pages, dictionaries when they halve the size,
// statistics and an offset index by default; per-column encodings (PLAIN, RLE booleans, DELTA_BINARY_PACKED,
// DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT) and codecs UNCOMPRESSED/SNAPPY on request.
import { parquetWriteFile } from 'hyparquet-writer';

function columns(n, encodings) {
  const nul = (i, v) => (i % 7 === 3 ? null : v);
  const cols = [
    { name: 'i32', type: 'INT32', data: Array.from({ length: n }, (_, i) => nul(i, (i * 48271 % 2147483647) - 1073741824)) },
    { name: 'i64', type: 'INT64', data: Array.from({ length: n }, (_, i) => nul(i, BigInt(i) * 1000000007n - 3n)) },
    { name: 'f32', type: 'FLOAT', data: Array.from({ length: n }, (_, i) => nul(i, Math.fround(i / 8 - 100))) },
    { name: 'f64', type: 'DOUBLE', data: Array.from({ length: n }, (_, i) => nul(i, i / 3 + 0.1)) },
    { name: 'b', type: 'BOOLEAN', data: Array.from({ length: n }, (_, i) => nul(i, i % 3 === 1)) },
    { name: 's', type: 'STRING', data: Array.from({ length: n }, (_, i) => nul(i, `name_${i % 50}_${i % 7 ? '' : 'ü'}`)) },
    { name: 'su', type: 'STRING', data: Array.from({ length: n }, (_, i) => nul(i, `common/prefix/${String(i * 17).padStart(8, '0')}`)) },
    { name: 'bin', type: 'BYTE_ARRAY', data: Array.from({ length: n }, (_, i) => nul(i, Uint8Array.from({ length: i % 6 }, (_, k) => (i + k * 29) & 255))) },
    { name: 'ts', type: 'TIMESTAMP', data: Array.from({ length: n }, (_, i) => nul(i, new Date(1700000000000 + i * 1001))) },
    { name: 'req', type: 'INT32', nullable: false, data: Array.from({ length: n }, (_, i) => i) },
  ];
  if (encodings) {
    for (const c of cols) {
      const enc = { i32: 'DELTA_BINARY_PACKED', i64: 'DELTA_BINARY_PACKED', f32: 'BYTE_STREAM_SPLIT', f64: 'BYTE_STREAM_SPLIT',
        b: 'RLE', s: 'DELTA_LENGTH_BYTE_ARRAY', su: 'DELTA_BYTE_ARRAY', bin: 'DELTA_LENGTH_BYTE_ARRAY', ts: 'DELTA_BINARY_PACKED',
        req: 'PLAIN' }[c.name];
      if (enc) c.encoding = enc;
    }
  }
  return cols;
}

export function hyparquetCases(scale = 1) {
  const mk = (name, n0, opts, encodings, n = Math.max(1, Math.round(n0 * scale))) => ({
    name, writer: 'hyparquet-writer', dumpWith: 'hyparquet', crossCheck: ['duckdb', 'wasm'],
    write: path => parquetWriteFile({ filename: path, columnData: columns(n, encodings), ...opts }),
  });
  return [
    mk('hyparquet_defaults', 5000, {}, false),
    mk('hyparquet_encodings_snappy', 5000, { rowGroupSize: 2000, pageSize: 4096 }, true),
    mk('hyparquet_encodings_uncompressed', 3000, { codec: 'UNCOMPRESSED', statistics: false }, true),
    mk('hyparquet_small_pages', 3000, { pageSize: 256, rowGroupSize: [100, 1000] }, false),
  ];
}
