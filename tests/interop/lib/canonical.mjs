// Canonical JSON form of a Parquet file's values, shared by every oracle and by lakerun's C++ tests.
//
// The form depends only on the file's Parquet schema (physical + logical/converted types), never on the tool that
// read it, so dumps from DuckDB, parquet-wasm, hyparquet and lakerun compare value by value:
//
//   { "num_rows": N, "columns": { "<top-level field>": [ value of row 0, value of row 1, ... ], ... } }
//
// Leaf values (see docs/testing-parquet.md):
//   BOOLEAN                                   true / false
//   INT32 (any INT(8|16|32) signed/unsigned),
//   DATE (days), TIME(MILLIS)                 JSON number (unsigned kept unsigned)
//   INT64 (signed/unsigned), TIME(MICROS|NANOS),
//   TIMESTAMP(any unit, any UTC flag)         decimal string of the integer in the file's unit ("-12", "1700000000000")
//   FLOAT, DOUBLE, FLOAT16                    shortest round-trip JSON number of the value widened to double;
//                                             "NaN", "Infinity", "-Infinity", "-0" as strings
//   DECIMAL (INT32/INT64/FLBA/BYTE_ARRAY)     string "<unscaled integer>e-<scale>" ("-12345e-2")
//   STRING/ENUM/JSON BYTE_ARRAY               JSON string
//   UUID                                      32 lowercase hex digits, no dashes
//   other BYTE_ARRAY / FLBA / INT96           lowercase hex of the raw bytes
// A dump may also carry "lossy": { "<field>": "why" } for fields its reader cannot represent exactly; comparisons
// skip those fields.
// Nested: LIST -> JSON array; STRUCT -> object keyed by field name; MAP -> array of [key, value] pairs;
// null at any level -> null.
import { parquetMetadata } from 'hyparquet';
import { readFileSync } from 'node:fs';

export function toArrayBuffer(buf) {
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
}

export function readMetadata(path) {
  return parquetMetadata(toArrayBuffer(readFileSync(path)));
}

// ---- schema tree ------------------------------------------------------------------------------------------------

function leafKind(el) {
  const lt = el.logical_type;
  const ct = el.converted_type;
  const t = el.type;
  if (ct === 'DECIMAL' || lt?.type === 'DECIMAL') {
    return { kind: 'decimal', scale: el.scale ?? lt?.scale ?? 0 };
  }
  if (lt?.type === 'UUID') return { kind: 'uuid' };
  if (lt?.type === 'FLOAT16') return { kind: 'float' };
  if (lt?.type === 'TIMESTAMP') return { kind: 'timestamp', unit: lt.unit, utc: lt.isAdjustedToUTC };
  if (ct === 'TIMESTAMP_MILLIS') return { kind: 'timestamp', unit: 'MILLIS', utc: true };
  if (ct === 'TIMESTAMP_MICROS') return { kind: 'timestamp', unit: 'MICROS', utc: true };
  if (lt?.type === 'TIME') return { kind: 'time', unit: lt.unit };
  if (ct === 'TIME_MILLIS') return { kind: 'time', unit: 'MILLIS' };
  if (ct === 'TIME_MICROS') return { kind: 'time', unit: 'MICROS' };
  if (ct === 'DATE' || lt?.type === 'DATE') return { kind: 'date' };
  switch (t) {
    case 'BOOLEAN': return { kind: 'bool' };
    case 'INT32': {
      const unsigned = ['UINT_8', 'UINT_16', 'UINT_32'].includes(ct) || (lt?.type === 'INTEGER' && !lt.isSigned);
      return { kind: unsigned ? 'uint32' : 'int32' };
    }
    case 'INT64': {
      const unsigned = ct === 'UINT_64' || (lt?.type === 'INTEGER' && !lt.isSigned);
      return { kind: unsigned ? 'uint64' : 'int64' };
    }
    case 'FLOAT': case 'DOUBLE': return { kind: 'float' };
    case 'INT96': return { kind: 'bytes' };
    case 'BYTE_ARRAY': {
      const text = ['UTF8', 'ENUM', 'JSON'].includes(ct) || ['STRING', 'ENUM', 'JSON'].includes(lt?.type);
      return { kind: text ? 'string' : 'bytes' };
    }
    case 'FIXED_LEN_BYTE_ARRAY': return { kind: 'bytes' };
  }
  throw new Error(`unsupported physical type ${t} for ${el.name}`);
}

/// Builds a tree {name, optional, shape: 'leaf'|'struct'|'list'|'map', children, element, key, value, leaf}
/// from the flat schema list, applying the LIST/MAP backward-compatibility rules of the Parquet spec.
export function schemaTree(schema) {
  let pos = 0;
  function node() {
    const el = schema[pos++];
    const kids = [];
    for (let i = 0; i < (el.num_children ?? 0); i++) kids.push(node());
    return { el, kids };
  }
  const root = node();
  function build(n, repeatedAsList = true) {
    const el = n.el;
    const rep = el.repetition_type;
    const base = { name: el.name, optional: rep === 'OPTIONAL' };
    if (rep === 'REPEATED' && repeatedAsList) {
      // Unannotated repeated field: a required list of its element.
      return { ...base, optional: false, shape: 'list', element: build(n, false) };
    }
    const ann = el.converted_type ?? el.logical_type?.type;
    if (n.kids.length === 0) return { ...base, shape: 'leaf', leaf: leafKind(el) };
    if (ann === 'LIST' && n.kids.length === 1) {
      const rep_ = n.kids[0];
      let element;
      if (rep_.kids.length === 0) element = build(rep_, false);                 // rule: repeated primitive
      else if (rep_.kids.length > 1 || rep_.el.name === 'array' || rep_.el.name === `${el.name}_tuple`) {
        element = build(rep_, false);                                          // rules: repeated group is the element
      } else element = build(rep_.kids[0]);                                     // 3-level list
      if (element.shape === 'struct' && rep_.kids.length === 0) element.optional = false;
      return { ...base, shape: 'list', element };
    }
    if ((ann === 'MAP' || ann === 'MAP_KEY_VALUE') && n.kids.length === 1 && n.kids[0].kids.length === 2) {
      const kv = n.kids[0];
      return { ...base, shape: 'map', key: build(kv.kids[0]), value: build(kv.kids[1]) };
    }
    return { ...base, shape: 'struct', children: n.kids.map(k => build(k)) };
  }
  return root.kids.map(k => build(k));
}

// ---- leaf rendering ---------------------------------------------------------------------------------------------

export function hex(bytes) {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

export function canonFloat(x) {
  x = Number(x);
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  if (x === 0 && 1 / x < 0) return '-0';
  return x;   // JSON.stringify writes the shortest round-trip repr
}

/// `raw` is the value in file terms, as each reader adapter hands it over:
///   bool: boolean; int32/uint32/date/time(ms): number or bigint; int64/uint64/time/timestamp: bigint or number
///   (already in the file's unit); float: number; string: string; bytes/uuid: Uint8Array (uuid also a hex string);
///   decimal: bigint (unscaled).
export function canonLeaf(leaf, raw) {
  if (raw === null || raw === undefined) return null;
  switch (leaf.kind) {
    case 'bool': return Boolean(raw);
    case 'int32': case 'uint32': case 'date': return Number(raw);
    case 'time': return leaf.unit === 'MILLIS' ? Number(raw) : BigInt(raw).toString();
    case 'int64': case 'uint64': case 'timestamp': return BigInt(raw).toString();
    case 'float': return canonFloat(raw);
    case 'string': return typeof raw === 'string' ? raw : new TextDecoder().decode(raw);
    case 'uuid': return typeof raw === 'string' ? raw.replace(/-/g, '').toLowerCase() : hex(raw);
    case 'bytes': return typeof raw === 'string' ? raw : hex(raw);
    case 'decimal': return `${BigInt(raw).toString()}e-${leaf.scale}`;
  }
  throw new Error(`unknown leaf kind ${leaf.kind}`);
}

/// Big-endian two's complement bytes -> bigint (FLBA/BYTE_ARRAY decimals).
export function bigintFromBE(bytes) {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  const bits = BigInt(bytes.length * 8);
  if (bytes.length && (bytes[0] & 0x80)) v -= 1n << bits;
  return v;
}

// ---- generic renderer over a reader adapter ---------------------------------------------------------------------

/// adapter: { isNull(v), list(v) -> iterable, field(v, name, index) -> v, mapEntries(v) -> [[k, v]...], leaf(node, v) -> raw }
export function renderValue(node, v, adapter) {
  if (adapter.isNull(v)) return null;
  switch (node.shape) {
    case 'leaf': return canonLeaf(node.leaf, adapter.leaf(node, v));
    case 'list': return Array.from(adapter.list(v), x => renderValue(node.element, x, adapter));
    case 'map': return adapter.mapEntries(v).map(([k, x]) => [renderValue(node.key, k, adapter), renderValue(node.value, x, adapter)]);
    case 'struct': {
      const out = {};
      node.children.forEach((c, i) => { out[c.name] = renderValue(c, adapter.field(v, c.name, i), adapter); });
      return out;
    }
  }
  throw new Error(`bad shape ${node.shape}`);
}

// ---- comparison (used for cross-checks between oracles) ---------------------------------------------------------

function eq(a, b) {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return a === b;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => eq(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every(k => eq(a[k], b[k]));
  }
  return false;
}

/// Returns a list of human-readable differences (at most `limit`), empty when both dumps agree. Columns that either
/// dump marks as `lossy` (the reader cannot represent them exactly) are not compared.
export function diffDumps(a, b, limit = 10, skip = []) {
  const out = [];
  if (a.num_rows !== b.num_rows) out.push(`num_rows ${a.num_rows} vs ${b.num_rows}`);
  const cols = new Set([...Object.keys(a.columns), ...Object.keys(b.columns)]);
  for (const c of cols) {
    if (a.lossy?.[c] || b.lossy?.[c] || skip.includes(c)) continue;
    const x = a.columns[c], y = b.columns[c];
    if (!x || !y) { out.push(`column ${c} missing on one side`); continue; }
    if (x.length !== y.length) { out.push(`column ${c}: ${x.length} vs ${y.length} values`); continue; }
    for (let r = 0; r < x.length && out.length < limit; r++) {
      if (!eq(x[r], y[r])) out.push(`column ${c} row ${r}: ${JSON.stringify(x[r])} vs ${JSON.stringify(y[r])}`);
    }
  }
  return out.slice(0, limit);
}

/// JSON.stringify that writes bigints as strings (dumps never contain raw bigints, this is a safety net).
export function stringify(obj) {
  return JSON.stringify(obj, (k, v) => (typeof v === 'bigint' ? v.toString() : v));
}
