#!/usr/bin/env node
// write_parquet.mjs OUT.parquet QUERY
//
// Writes the rows of a DuckDB query to OUT.parquet (DuckDB's Parquet writer), for tests that need column types
// lakerun's CSV import does not make: decimals, timestamps, lists, nulls among them (python/tests).
import { DuckDBInstance } from '@duckdb/node-api';

const [out, query] = process.argv.slice(2);
if (!out || !query) {
  console.error('usage: write_parquet.mjs OUT.parquet QUERY');
  process.exit(2);
}
const con = await (await DuckDBInstance.create(':memory:')).connect();
await con.run(`COPY (${query}) TO '${out.replaceAll("'", "''")}' (FORMAT PARQUET)`);
