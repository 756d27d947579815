// Files written by DuckDB (C++): every type it can write, both PARQUET_VERSIONs, every codec, dictionary and
// non-dictionary strings, nested LIST / LIST<LIST> / STRUCT / MAP / LIST<STRUCT>, nulls at every level, and a
// multi-megabyte single page. DuckDB always writes DATA_PAGE (v1) headers; V2 switches the value encodings to
// DELTA_BINARY_PACKED / DELTA_LENGTH_BYTE_ARRAY / BYTE_STREAM_SPLIT / RLE_DICTIONARY.
import { duckdbConnection } from './readers.mjs';

// Deterministic values from the row number i; row i % 7 == 3 is null in every nullable column.
const NULL_ROW = 'i % 7 = 3';
const nullable = expr => `CASE WHEN ${NULL_ROW} THEN NULL ELSE ${expr} END`;
export const ALL_TYPES_SQL = `SELECT
  ${nullable('i % 3 = 0')} AS b,
  ${nullable('(i % 256 - 128)::TINYINT')} AS i8,
  ${nullable('((i * 37) % 65536 - 32768)::SMALLINT')} AS i16,
  ${nullable('((i::BIGINT * 2654435761) % 4294967296 - 2147483648)::INTEGER')} AS i32,
  ${nullable('((hash(i) >> 1)::BIGINT * (CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END))')} AS i64,
  ${nullable('(i % 256)::UTINYINT')} AS u8,
  ${nullable('((i * 37) % 65536)::USMALLINT')} AS u16,
  ${nullable('((i::UBIGINT * 2654435761) % 4294967296)::UINTEGER')} AS u32,
  ${nullable('hash(i)')} AS u64,
  ${nullable(`CASE i % 50 WHEN 1 THEN 'nan'::FLOAT WHEN 2 THEN 'inf'::FLOAT WHEN 4 THEN '-inf'::FLOAT
              WHEN 5 THEN '-0.0'::FLOAT ELSE (i * 0.37 - 100)::FLOAT END`)} AS f32,
  ${nullable(`CASE i % 50 WHEN 1 THEN 'nan'::DOUBLE WHEN 2 THEN 'inf'::DOUBLE WHEN 4 THEN '-inf'::DOUBLE
              WHEN 5 THEN '-0.0'::DOUBLE ELSE i / 7.0 - 1e6 END`)} AS f64,
  ${nullable('((i % 19999) - 9999)::DECIMAL(4,0) / 10')}::DECIMAL(4,1) AS dec4,
  ${nullable('(((i * 7919) % 1999999999) - 999999999)::DECIMAL(18,2) / 100')}::DECIMAL(9,2) AS dec9,
  ${nullable('((hash(i) >> 5)::DECIMAL(38,0) - 288230376151711744) / 1000')}::DECIMAL(18,3) AS dec18,
  ${nullable('((hash(i)::DECIMAL(38,0) * 1000000007 - 9000000000000000000000000000) / 100000)')}::DECIMAL(38,5) AS dec38,
  ${nullable(`DATE '1970-01-01' + ((i * 13) % 40000 - 20000)::INTEGER`)} AS dt,
  ${nullable(`TIME '00:00:00' + to_microseconds((i::BIGINT * 7919123) % 86400000000)`)} AS tm,
  ${nullable(`make_timestamp((i::BIGINT * 1000003 - 500000000) * 1000)::TIMESTAMP_MS`)} AS ts_ms,
  ${nullable(`make_timestamp(i::BIGINT * 1000003123 - 1000000000000)`)} AS ts_us,
  ${nullable(`make_timestamp_ns(i::BIGINT * 1000003123457 - 1000000000000000)`)} AS ts_ns,
  ${nullable(`make_timestamp(i::BIGINT * 3600000001)::TIMESTAMPTZ`)} AS ts_tz,
  ${nullable('md5(i::VARCHAR)::UUID')} AS uid,
  ${nullable(`'str_' || i::VARCHAR || repeat('x', i % 5) || CASE WHEN i % 10 = 0 THEN ' é😀' ELSE '' END`)} AS s,
  ${nullable(`'cat_' || (i % 17)::VARCHAR`)} AS sdict,
  ${nullable(`CASE WHEN i % 11 = 0 THEN ''::BLOB ELSE unhex(repeat(md5(i::VARCHAR), 1 + i % 3)) END`)} AS bl,
  CASE WHEN i % 5 = 0 THEN NULL WHEN i % 5 = 1 THEN []::INTEGER[]
       ELSE [i, NULL, i + 1, -i][1:(i % 4) + 1] END AS l,
  CASE WHEN i % 6 = 0 THEN NULL ELSE [['a' || i::VARCHAR, NULL], [], NULL, ['b']][1:(i % 4) + 1] END AS ll,
  CASE WHEN i % 9 = 0 THEN NULL
       ELSE {'x': CASE WHEN i % 4 = 1 THEN NULL ELSE i END, 'y': 'v' || i::VARCHAR,
             'z': [i / 3.0, NULL][1:(i % 3)]} END AS st,
  CASE WHEN i % 4 = 0 THEN NULL WHEN i % 4 = 1 THEN MAP {}::MAP(VARCHAR, INTEGER)
       ELSE MAP {'k1': i, 'k2': CASE WHEN i % 8 = 2 THEN NULL ELSE -i END} END AS mp,
  CASE WHEN i % 10 = 0 THEN NULL
       ELSE [{'a': i, 'b': 'w' || i::VARCHAR}, {'a': NULL, 'b': NULL}, NULL][1:(i % 3) + 1] END AS ls
FROM range(__N__) t(i)`;

// Observed with hyparquet 1.31.5 on DuckDB's PARQUET_VERSION V2 files: DELTA_BINARY_PACKED UINT_32 values after the
// first row group come back off by 2^31 (DuckDB's values are the ones the SQL computes). parquet-rs 59.3 refuses
// the same files ("'min_delta' too large": DuckDB's 64-bit deltas wrap around, which the spec allows).
const V2_DIVERGENCES = { hyparquet: ['u32'] };

function duckCase(name, sql, copyOptions, notes) {
  return {
    name, writer: 'duckdb', dumpWith: 'duckdb', crossCheck: ['wasm', 'hyparquet'], notes,
    knownDivergences: copyOptions.includes('PARQUET_VERSION V2') ? V2_DIVERGENCES : {},
    async write(path) {
      const con = await duckdbConnection();
      await con.run(`COPY (${sql}) TO '${path}' (FORMAT parquet, ${copyOptions})`);
    },
  };
}

/// `n`: rows of the all-types files (tiny values give fuzz seeds); `extra`: also the dictionary and big-page files.
export function duckdbCases(n = 2300, extra = true) {
  const cases = [];
  const all = ALL_TYPES_SQL.replace('__N__', String(n));  // > 2048 rows: DuckDB's row groups hold 2048-row multiples
  for (const version of ['V1', 'V2']) {
    for (const codec of ['uncompressed', 'snappy', 'gzip', 'zstd', 'lz4_raw', 'brotli']) {
      cases.push(duckCase(`duckdb_all_${version.toLowerCase()}_${codec}`, all,
                          `PARQUET_VERSION ${version}, COMPRESSION ${codec}, ROW_GROUP_SIZE 1000`));
    }
    // No dictionaries: PLAIN (V1) or DELTA_LENGTH_BYTE_ARRAY / DELTA_BINARY_PACKED (V2) everywhere.
    cases.push(duckCase(`duckdb_all_${version.toLowerCase()}_nodict`, all,
                        `PARQUET_VERSION ${version}, COMPRESSION snappy, DICTIONARY_SIZE_LIMIT 1,
                         STRING_DICTIONARY_PAGE_SIZE_LIMIT 1`));
  }
  // V2 encodings without the full-range INT32 columns, whose 33-bit DuckDB deltas some readers refuse: keeps
  // DELTA_BINARY_PACKED / DELTA_LENGTH_BYTE_ARRAY / BYTE_STREAM_SPLIT of every other type checked on their own.
  cases.push(duckCase('duckdb_v2_narrow_int32_zstd', `SELECT * EXCLUDE (i32, u32, dec9) FROM (${all})`,
                      'PARQUET_VERSION V2, COMPRESSION zstd, ROW_GROUP_SIZE 1000'));
  if (!extra) return cases;
  // Dictionary strings over several row groups (DuckDB switches to PLAIN once a dictionary grows too large).
  cases.push(duckCase('duckdb_dict_strings', `SELECT 'cat_' || (i % 1000)::VARCHAR AS cat,
      'user_' || (i * 7919 % 100000)::VARCHAR AS hi_card, (i % 1000)::BIGINT AS label FROM range(30000) t(i)`,
      'COMPRESSION snappy, ROW_GROUP_SIZE 12000'));
  // One ~1.6 MB page: DuckDB writes one data page per column chunk.
  cases.push(duckCase('duckdb_big_page_blob', `SELECT unhex(repeat('00', 312) || md5(i::VARCHAR) || md5((i+1)::VARCHAR)
      || repeat('00', 312)) AS image, (i % 10)::INTEGER AS label FROM range(2000) t(i)`,
      'COMPRESSION snappy, ROW_GROUP_SIZE 100000', 'one data page of ~1.6 MB'));
  return cases;
}
