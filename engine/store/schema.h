// SPDX-License-Identifier: MIT
/// @brief The SQL of the run database, schema version 3 (docs/run-database.md).
#pragma once

#include <string_view>
#include <utility>

namespace swapscope::store {

/// The columns schema version 2 added. A version-1 file has none of them; the reader gives their
/// values as absent (-1), and the fits that need them are marked absent.
inline constexpr std::pair<std::string_view, std::string_view> kVersion2Columns[] = {
    {"batches", "dispatch_ns"}, {"samples", "ready_ns"}, {"samples", "copy_overlap_ns"}};

/// The table schema version 3 added: the recompute tasks. An older file has none, and the reader
/// gives none.
inline constexpr std::string_view kVersion3Table = "recomputes";

/// Tables, created with the file. STRICT: a value of the wrong type is an error, not a surprise.
inline constexpr const char* kSchemaSql = R"sql(
CREATE TABLE meta(
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL) STRICT;
CREATE TABLE network(
  id             INTEGER PRIMARY KEY CHECK (id = 1),
  name           TEXT NOT NULL,
  structure_hash TEXT NOT NULL,
  json           TEXT NOT NULL) STRICT;
CREATE TABLE layers(
  id               INTEGER PRIMARY KEY,
  name             TEXT NOT NULL,
  kind             TEXT NOT NULL,
  inputs           TEXT NOT NULL,
  out_shape        TEXT NOT NULL,
  params           INTEGER NOT NULL,
  fwd_flops        INTEGER NOT NULL,
  bwd_data_flops   INTEGER NOT NULL,
  bwd_weight_flops INTEGER NOT NULL,
  fm_fixed         INTEGER NOT NULL,
  fm_per_sample    INTEGER NOT NULL) STRICT;
CREATE TABLE steps(
  step             INTEGER PRIMARY KEY,
  layer            INTEGER NOT NULL,
  direction        TEXT NOT NULL CHECK (direction IN ('fwd', 'bwd', 'update')),
  flops_per_sample INTEGER NOT NULL) STRICT;
CREATE TABLE tensors(
  id              INTEGER PRIMARY KEY,
  name            TEXT NOT NULL,
  kind            TEXT NOT NULL,
  layer           INTEGER NOT NULL,
  size_fixed      INTEGER NOT NULL,
  size_per_sample INTEGER NOT NULL) STRICT;
CREATE TABLE batches(
  k                  INTEGER PRIMARY KEY,
  policy             TEXT NOT NULL,
  warmup             INTEGER NOT NULL,
  predicted_peak     INTEGER NOT NULL,
  measured_peak      INTEGER NOT NULL,
  reuse_delay        INTEGER NOT NULL,
  hoisted_prefetches INTEGER NOT NULL,
  dispatch_ns        INTEGER NOT NULL) STRICT;
CREATE TABLE iterations(
  k              INTEGER NOT NULL,
  iteration      INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  duration_ns    INTEGER NOT NULL,
  loss           REAL NOT NULL,
  stall_ns       INTEGER NOT NULL,
  offload_bytes  INTEGER NOT NULL,
  prefetch_bytes INTEGER NOT NULL,
  load_bytes     INTEGER NOT NULL,
  PRIMARY KEY (k, iteration)) STRICT;
CREATE TABLE samples(
  k         INTEGER NOT NULL,
  iteration INTEGER NOT NULL,
  step      INTEGER NOT NULL,
  layer     INTEGER NOT NULL,
  direction TEXT NOT NULL CHECK (direction IN ('fwd', 'bwd', 'update')),
  flops     INTEGER NOT NULL,
  start_ns  INTEGER NOT NULL,
  time_ns   INTEGER NOT NULL,
  stall_ns  INTEGER NOT NULL,
  ready_ns  INTEGER NOT NULL,
  copy_overlap_ns INTEGER NOT NULL) STRICT;
CREATE TABLE recomputes(
  k         INTEGER NOT NULL,
  iteration INTEGER NOT NULL,
  step      INTEGER NOT NULL,
  layer     INTEGER NOT NULL,
  flops     INTEGER NOT NULL,
  start_ns  INTEGER NOT NULL,
  time_ns   INTEGER NOT NULL) STRICT;
CREATE TABLE transfers(
  k          INTEGER NOT NULL,
  iteration  INTEGER NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('offload', 'prefetch', 'load', 'readback')),
  direction  TEXT NOT NULL CHECK (direction IN ('h2d', 'd2h')),
  tensor     INTEGER NOT NULL,
  step       INTEGER NOT NULL,
  bytes      INTEGER NOT NULL,
  start_ns   INTEGER NOT NULL,
  end_ns     INTEGER NOT NULL,
  pinned     INTEGER NOT NULL,
  overlap_ns INTEGER NOT NULL) STRICT;
CREATE TABLE memory(
  k         INTEGER NOT NULL,
  iteration INTEGER NOT NULL,
  time_ns   INTEGER NOT NULL,
  in_use    INTEGER NOT NULL) STRICT;
CREATE TABLE fits(
  id            INTEGER PRIMARY KEY,
  scope         TEXT NOT NULL,
  target        TEXT NOT NULL,
  direction     TEXT NOT NULL,
  form          TEXT NOT NULL,
  params        TEXT NOT NULL,
  points        INTEGER NOT NULL,
  rmse          REAL NOT NULL,
  max_rel_error REAL NOT NULL,
  chosen        INTEGER NOT NULL) STRICT;
CREATE TABLE plans(
  id                INTEGER PRIMARY KEY,
  created_utc       TEXT NOT NULL,
  policy            TEXT NOT NULL,
  mode              TEXT NOT NULL,
  budget            INTEGER NOT NULL,
  k                 INTEGER NOT NULL,
  predicted_iter_ns INTEGER NOT NULL,
  json              TEXT NOT NULL) STRICT;
)sql";

/// Indexes for the queries by minibatch and iteration, built once when the run finishes (bulk
/// inserts are faster without them; a killed run is small enough to scan).
inline constexpr const char* kIndexSql = R"sql(
CREATE INDEX IF NOT EXISTS samples_by_k ON samples(k, iteration, step);
CREATE INDEX IF NOT EXISTS transfers_by_k ON transfers(k, iteration, start_ns);
CREATE INDEX IF NOT EXISTS memory_by_k ON memory(k, iteration, time_ns);
)sql";

}  // namespace swapscope::store
