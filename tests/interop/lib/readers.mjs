// Three independent Parquet readers, each rendering a file into the canonical JSON form of canonical.mjs:
//   DuckDB (C++, @duckdb/node-api), parquet-rs (Rust, parquet-wasm -> Arrow IPC -> apache-arrow), hyparquet (JS).
// The file's own schema (parsed by hyparquet's footer reader) decides the canonical form; each adapter only turns
// the tool's value into the file-level raw value (see canonLeaf).
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import * as pw from 'parquet-wasm';
import { tableFromIPC, Type } from 'apache-arrow';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { schemaTree, renderValue, toArrayBuffer, bigintFromBE, readMetadata } from './canonical.mjs';

/// Whether any leaf under schema node `n` satisfies `pred`.
function anyLeaf(n, pred) {
  switch (n.shape) {
    case 'leaf': return pred(n.leaf);
    case 'list': return anyLeaf(n.element, pred);
    case 'map': return anyLeaf(n.key, pred) || anyLeaf(n.value, pred);
    default: return n.children.some(c => anyLeaf(c, pred));
  }
}

const UNIT_PER_SECOND = { MILLIS: 1000n, MICROS: 1000000n, NANOS: 1000000000n };
function rescale(value, fromPerSec, toUnit) {
  const to = UNIT_PER_SECOND[toUnit];
  const v = BigInt(value);
  if (to === fromPerSec) return v;
  if (to > fromPerSec) return v * (to / fromPerSec);
  return v / (fromPerSec / to);   // exact for values the file can hold
}

function sqlString(s) { return `'${s.replace(/'/g, "''")}'`; }

// ---- DuckDB -----------------------------------------------------------------------------------------------------

let duckCon = null;
export async function duckdbConnection() {
  if (!duckCon) {
    duckCon = await (await DuckDBInstance.create(':memory:', { threads: '2' })).connect();
  }
  return duckCon;
}

const duckAdapter = {
  isNull: v => v === null || v === undefined,
  list: v => v.items,
  field: (v, name) => v.entries[name],
  mapEntries: v => v.entries.map(e => [e.key, e.value]),
  leaf(node, v) {
    const leaf = node.leaf;
    switch (leaf.kind) {
      case 'decimal': return v.value !== undefined ? v.value : BigInt(v);
      case 'date': return v.days;
      case 'time':
        if (v.nanos !== undefined) return rescale(v.nanos, UNIT_PER_SECOND.NANOS, leaf.unit);
        return rescale(v.micros, UNIT_PER_SECOND.MICROS, leaf.unit);
      case 'timestamp':
        if (v.nanos !== undefined) return rescale(v.nanos, UNIT_PER_SECOND.NANOS, leaf.unit);
        if (v.millis !== undefined) return rescale(v.millis, UNIT_PER_SECOND.MILLIS, leaf.unit);
        if (v.seconds !== undefined) return rescale(v.seconds, 1n, leaf.unit);
        return rescale(v.micros, UNIT_PER_SECOND.MICROS, leaf.unit);
      case 'uuid': return String(v);
      case 'bytes': return v.bytes ?? v;
      case 'string': return typeof v === 'string' ? v : (v.bytes ?? String(v));
      case 'float': return v;
      default: return v;
    }
  },
};

export async function dumpDuckDB(path) {
  const con = await duckdbConnection();
  const tree = schemaTree(readMetadata(path).schema);
  const cols = tree.map(n => `"${n.name.replace(/"/g, '""')}"`).join(', ');
  // file_row_number keeps the file's row order even when DuckDB scans row groups in parallel.
  const reader = await con.runAndReadAll(
    `SELECT ${cols} FROM read_parquet(${sqlString(path)}, file_row_number = true) ORDER BY file_row_number`);
  const columns = reader.getColumns();
  const out = { num_rows: reader.currentRowCount, columns: {}, lossy: {} };
  tree.forEach((n, i) => { out.columns[n.name] = columns[i].map(v => renderValue(n, v, duckAdapter)); });
  // DuckDB has no nanosecond TIMESTAMP WITH TIME ZONE: it reads TIMESTAMP(NANOS, UTC) as microseconds.
  for (const n of tree) {
    if (anyLeaf(n, l => l.kind === 'timestamp' && l.unit === 'NANOS' && l.utc)) {
      out.lossy[n.name] = 'DuckDB reads TIMESTAMP(NANOS, UTC) with microsecond precision';
    }
  }
  return out;
}

// ---- parquet-wasm (parquet-rs) via Arrow ------------------------------------------------------------------------

/// Reads raw values out of apache-arrow Data objects (no getters, which round timestamps to milliseconds).
function arrowValid(data, i) {
  if (!data.nullBitmap || data.nullBitmap.length === 0 || data.nullCount === 0) return true;
  const j = data.offset + i;
  return (data.nullBitmap[j >> 3] >> (j & 7)) & 1;
}

class ArrowRef { constructor(data, i) { this.data = data; this.i = i; } }

function arrowRaw(data, i, leaf) {
  const j = data.offset + i;
  const t = data.type;
  switch (t.typeId) {
    case Type.Bool: return Boolean((data.values[j >> 3] >> (j & 7)) & 1);
    case Type.Int: case Type.Float: case Type.Date:
      if (t.typeId === Type.Float && t.precision === 0) return halfToFloat(data.values[j]);
      if (t.typeId === Type.Date && t.unit === 1) return Number(data.values[j] / 86400000n); // Date64 millis
      return data.values[j];
    case Type.Time: return rescale(data.values[j], UNIT_PER_SECOND[['', 'MILLIS', 'MICROS', 'NANOS'][t.unit]] ?? 1n, leaf.unit);
    case Type.Timestamp: return rescale(data.values[j], [1n, 1000n, 1000000n, 1000000000n][t.unit], leaf.unit);
    case Type.Decimal: {
      const words = t.bitWidth / 32;
      let v = 0n;
      for (let w = words - 1; w >= 0; w--) v = (v << 32n) | BigInt(data.values[j * words + w] >>> 0);
      if (data.values[j * words + words - 1] & 0x80000000) v -= 1n << BigInt(t.bitWidth);
      return v;
    }
    case Type.Utf8: case Type.Binary: case Type.LargeUtf8: case Type.LargeBinary: {
      const a = Number(data.valueOffsets[j]), b = Number(data.valueOffsets[j + 1]);
      const bytes = data.values.subarray(a, b);
      if (leaf.kind === 'decimal') return bigintFromBE(bytes);
      return bytes;
    }
    case Type.FixedSizeBinary: {
      const w = t.byteWidth;
      const bytes = data.values.subarray(j * w, (j + 1) * w);
      if (leaf.kind === 'decimal') return bigintFromBE(bytes);
      if (leaf.kind === 'float') return halfToFloat(bytes[0] | (bytes[1] << 8));
      return bytes;
    }
    case Type.Dictionary: {
      const k = Number(data.values[j]);
      const dict = data.dictionary.data;
      let base = 0;
      for (const d of dict) { if (k < base + d.length) return arrowRaw(d, k - base, leaf); base += d.length; }
      throw new Error('dictionary index out of range');
    }
  }
  throw new Error(`unsupported arrow type ${t} for ${leaf.kind}`);
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

const arrowAdapter = {
  isNull: r => r === null || !arrowValid(r.data, r.i),
  list(r) {
    const j = r.data.offset + r.i;
    const a = Number(r.data.valueOffsets[j]), b = Number(r.data.valueOffsets[j + 1]);
    const child = r.data.children[0];
    const out = [];
    for (let k = a; k < b; k++) out.push(new ArrowRef(child, k));
    return out;
  },
  field(r, name) {
    const idx = r.data.type.children.findIndex(f => f.name === name);
    return new ArrowRef(r.data.children[idx], r.data.offset + r.i);
  },
  mapEntries(r) {
    return arrowAdapter.list(r).map(e => [new ArrowRef(e.data.children[0], e.i), new ArrowRef(e.data.children[1], e.i)]);
  },
  leaf: (node, r) => arrowRaw(r.data, r.i, node.leaf),
};

export function dumpWasm(path) {
  const tree = schemaTree(readMetadata(path).schema);
  const wasmTable = pw.readParquet(new Uint8Array(readFileSync(path)), { batchSize: 1 << 20 });
  const table = tableFromIPC(wasmTable.intoIPCStream());
  const out = { num_rows: table.numRows, columns: {} };
  for (const n of tree) out.columns[n.name] = [];
  for (const batch of table.batches) {
    tree.forEach(n => {
      const idx = batch.schema.fields.findIndex(f => f.name === n.name);
      const data = batch.data.children[idx];
      const col = out.columns[n.name];
      for (let i = 0; i < batch.numRows; i++) col.push(renderValue(n, new ArrowRef(data, i), arrowAdapter));
    });
  }
  return out;
}

// ---- hyparquet (pure JS) ----------------------------------------------------------------------------------------

const identity = x => x;
const rawParsers = {
  timestampFromMilliseconds: identity, timestampFromMicroseconds: identity, timestampFromNanoseconds: identity,
  dateFromDays: identity, stringFromBytes: b => b && new TextDecoder().decode(b), jsonFromBytes: identity, uuidFromBytes: identity,
  geometryFromBytes: identity, geographyFromBytes: identity,
};

const hyAdapter = {
  isNull: v => v === null || v === undefined,
  list: v => v,
  field: (v, name) => v[name],
  mapEntries: v => (v instanceof Map ? [...v.entries()] : Object.entries(v)),
  leaf(node, v) {
    const leaf = node.leaf;
    if (leaf.kind === 'decimal') {
      // hyparquet turns decimals into lossy JS numbers; rebuild the unscaled integer when it is exact.
      const scaled = Math.round(v * 10 ** leaf.scale);
      return Number.isSafeInteger(scaled) ? BigInt(scaled) : 0n;   // the column is marked lossy below
    }
    return v;
  },
};

export async function dumpHyparquet(path) {
  const tree = schemaTree(readMetadata(path).schema);
  const file = toArrayBuffer(readFileSync(path));
  const rows = await parquetReadObjects({ file, compressors, parsers: rawParsers, utf8: false });
  const out = { num_rows: rows.length, columns: {}, lossy: {} };
  for (const n of tree) {
    out.columns[n.name] = rows.map(r => renderValue(n, r[n.name], hyAdapter));
    if (anyLeaf(n, l => l.kind === 'decimal')) out.lossy[n.name] = 'hyparquet reads decimals as JS numbers';
  }
  return out;
}

export const DUMPERS = { duckdb: dumpDuckDB, wasm: dumpWasm, hyparquet: dumpHyparquet };
