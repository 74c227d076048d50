// SPDX-License-Identifier: MIT
/// @brief The run database: one SQLite file (.swapdb) per profiling or training run. The schema
/// is documented in docs/run-database.md.
///
/// - A RunWriter creates the file, marks it with the application id and the schema version, and
///   writes in WAL mode, one transaction per call. The run's status is "running" until finish();
///   a run whose writer is gone without finishing reads back as incomplete. finish() also turns
///   WAL off, so the finished file is one self-contained file.
///   If another process holds the file open when the run finishes, the file stays in WAL mode
///   (with its -wal next to it) rather than failing the run.
/// - A RunReader opens read-only and never writes to the file. Opening a missing, empty,
///   non-SQLite, damaged, foreign or newer file throws Error(BadInput) naming the file and why;
///   so does a missing table or column, and load() refuses a value of the wrong type, out of
///   range or pointing at a layer, step, tensor or iteration that does not exist, naming the
///   table, the row and the value.
///
/// Times are integer nanoseconds from the run's start; sizes are bytes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/gmap.h"
#include "analysis/layer_cost.h"
#include "common/bytes.h"
#include "common/files.h"
#include "graph/network.h"

namespace swapscope::store {

inline constexpr std::int32_t kApplicationId = 0x53775363;  ///< "SwSc" in the file header
inline constexpr int kSchemaVersion = 3;
inline constexpr const char* kRunDbExtension = ".swapdb";

enum class RunStatus {
  Running,     ///< the writer is still at work
  Complete,    ///< finished as planned
  Incomplete,  ///< interrupted, killed or crashed: holds what was recorded until then
  Failed,      ///< ended by an error, named in status_message
};
std::string_view runStatusName(RunStatus s);

struct RunMeta {
  std::string kind;  ///< "profile", "run", ...
  std::string backend;
  std::string device;
  std::int64_t device_memory = 0;
  std::map<std::string, std::string> versions;  ///< library -> version
  std::string command_line;
  std::string started_utc;  ///< ISO 8601, e.g. 2026-11-21T10:00:00Z
  std::int64_t budget = 0;
  std::string policy;
  std::string host_cpu;  ///< the host's CPU model and core count
  RunStatus status = RunStatus::Running;
  std::string status_message;
  std::int64_t writer_pid = 0;
  std::string writer_host;
  /// The writing process's boot id and start time in clock ticks since boot, "BOOT/TICKS"
  /// (Linux /proc); tells a live writer from a later process that got the same pid. Empty in
  /// files written before it was recorded, or where /proc is missing.
  std::string writer_start;
  std::map<std::string, std::string> extra;  ///< any other key the writer stored
};

/// What a plan for `budget` bytes from a profile of a device with `device_memory` bytes (0:
/// unknown) is warned of when the budget exceeds the device's memory ("the budget is above the
/// 23.5 GiB the profiled device has: a plan for it cannot run there"), as `swapscope plan` and
/// the app's Summary say it; empty where the budget fits the device or its memory is unknown.
std::string budgetAboveDeviceWarning(std::int64_t budget, std::int64_t device_memory);

struct LayerRow {
  int id = 0;
  std::string name, kind;
  std::vector<int> inputs;
  std::vector<std::int64_t> out_shape;  ///< per sample
  std::int64_t params = 0;
  std::int64_t fwd_flops = 0, bwd_data_flops = 0, bwd_weight_flops = 0;  ///< per sample
  LinearBytes fm;
  friend bool operator==(const LayerRow&, const LayerRow&) = default;
};

enum class Direction { Forward, Backward, Update };
std::string_view directionName(Direction d);  ///< "fwd", "bwd", "update"

struct StepRow {
  int step = 0;  ///< 1..2N; the SGD update is 2N+1
  int layer = -1;
  Direction direction = Direction::Forward;
  std::int64_t flops_per_sample = 0;
  friend bool operator==(const StepRow&, const StepRow&) = default;
};

struct TensorRow {
  int id = 0;  ///< the GMAP buffer index
  std::string name, kind;
  int layer = -1;
  LinearBytes size;
  friend bool operator==(const TensorRow&, const TensorRow&) = default;
};

/// One minibatch size a run executed.
struct BatchRow {
  std::int64_t k = 0;
  std::string policy;
  int warmup = 0;  ///< iterations run before recording
  std::int64_t predicted_peak = 0;
  std::int64_t measured_peak = 0;  ///< pool high-water mark
  int reuse_delay = 0;
  int hoisted_prefetches = 0;
  /// The median gap between a step's t_ready and its start over the recorded steps that waited
  /// on nothing (the compute stream's hand-off from one task to the next); -1: not measured
  /// (schema version 1, or no such step).
  std::int64_t dispatch_ns = -1;
  friend bool operator==(const BatchRow&, const BatchRow&) = default;
};

struct IterationRow {
  std::int64_t k = 0;
  int iteration = 0;  ///< 0-based among the recorded iterations of this k
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
  double loss = 0;
  std::int64_t stall_ns = 0;
  std::int64_t offload_bytes = 0, prefetch_bytes = 0, load_bytes = 0;
  friend bool operator==(const IterationRow&, const IterationRow&) = default;
};

/// One compute task: a step's kernels, or one layer's SGD update.
struct SampleRow {
  std::int64_t k = 0;
  int iteration = 0;
  int step = 0;
  int layer = -1;
  Direction direction = Direction::Forward;
  std::int64_t flops = 0;
  std::int64_t start_ns = 0;
  std::int64_t time_ns = 0;
  std::int64_t stall_ns = 0;  ///< compute idle right before this step
  /// t_ready: when the swap-stream tasks it waited on had ended (the iteration's start where it
  /// waited on none); -1: not recorded (always so in schema version 1).
  std::int64_t ready_ns = -1;
  /// Time it ran while a copy ran on a swap stream; -1: not recorded (always so in version 1).
  std::int64_t copy_overlap_ns = -1;
  friend bool operator==(const SampleRow&, const SampleRow&) = default;
};

/// One recompute task (schema version 3): a recomputed FM's layer run forward again inside a
/// backward step. Kept apart from the samples, which are the steps' own kernels the model fits.
struct RecomputeRow {
  std::int64_t k = 0;
  int iteration = 0;
  int step = 0;            ///< the backward step it ran in
  int layer = 0;           ///< the layer run again (the recomputed FM's producer)
  std::int64_t flops = 0;  ///< that layer's forward FLOPs at this k
  std::int64_t start_ns = 0;
  std::int64_t time_ns = 0;
  friend bool operator==(const RecomputeRow&, const RecomputeRow&) = default;
};

enum class TransferKind { Offload, Prefetch, Load, Readback };
std::string_view transferKindName(TransferKind k);  ///< "offload", "prefetch", "load", "readback"

struct TransferRow {
  std::int64_t k = 0;
  int iteration = 0;
  TransferKind kind = TransferKind::Offload;
  bool to_host = true;  ///< d2h; false: h2d
  int tensor = -1;
  int step = 0;
  std::int64_t bytes = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  bool pinned = false;          ///< the host side was page-locked (the column keeps its name)
  std::int64_t overlap_ns = 0;  ///< time it ran while the compute stream was busy
  friend bool operator==(const TransferRow&, const TransferRow&) = default;
};

/// Pool bytes in use from time_ns on.
struct MemoryRow {
  std::int64_t k = 0;
  int iteration = 0;
  std::int64_t time_ns = 0;
  std::int64_t in_use = 0;
  friend bool operator==(const MemoryRow&, const MemoryRow&) = default;
};

/// What a fit times (fits.scope): the steps of a layer kind or of one layer, the copies, the
/// compute stream's hand-off from one task to the next, or the contention between copies and
/// compute.
enum class FitScope { Type, Layer, Pcie, Dispatch, Contention };
std::string_view fitScopeName(FitScope s);  ///< "type", "layer", "pcie", "dispatch", "contention"
std::optional<FitScope> fitScopeFromName(std::string_view name);

/// The steps or copies a fit times (fits.direction); None ("-") for the timeline fits.
enum class FitDirection { Forward, Backward, Update, HostToDevice, DeviceToHost, None };
/// "fwd", "bwd", "update", "h2d", "d2h", "-"
std::string_view fitDirectionName(FitDirection d);
std::optional<FitDirection> fitDirectionFromName(std::string_view name);

/// The fitted form (fits.form): the step curves' three (perf::FitForm), the timeline fits' mean
/// of per-step medians, line through the origin and line, and the hand-off's earlier forms, the
/// mean and the median of its gaps, which files profiled before the mean of per-step medians
/// hold.
enum class FitRowForm : int {
  Affine,
  Saturating,
  LogLog,
  MeanOfStepMedians,
  Proportional,
  Line,
  Mean,
  Median
};
/// "affine", "saturating", "loglog", "mean-of-step-medians", "proportional", "line", "mean",
/// "median"
std::string_view fitRowFormName(FitRowForm f);
std::optional<FitRowForm> fitRowFormFromName(std::string_view name);

/// A fitted curve (issue: performance model). params is a JSON object.
struct FitRow {
  std::int64_t id = 0;
  FitScope scope = FitScope::Type;
  std::string target;  ///< layer kind, layer name, "h2d"/"d2h" (+"+compute"), the timeline fit
  FitDirection direction = FitDirection::Forward;
  FitRowForm form = FitRowForm::Affine;
  std::string params;
  int points = 0;
  double rmse = 0;
  double max_rel_error = 0;
  bool chosen = false;
  friend bool operator==(const FitRow&, const FitRow&) = default;
};

/// A plan (plan JSON text) with its key figures for listing.
struct PlanRow {
  std::int64_t id = 0;
  std::string created_utc;
  std::string policy, mode;
  std::int64_t budget = 0;
  std::int64_t k = 0;
  std::int64_t predicted_iter_ns = 0;
  std::string json;
  friend bool operator==(const PlanRow&, const PlanRow&) = default;
};

/// Everything one iteration produced, written in one transaction.
struct IterationRows {
  IterationRow iteration;
  std::vector<SampleRow> samples;
  std::vector<RecomputeRow> recomputes;
  std::vector<TransferRow> transfers;
  std::vector<MemoryRow> memory;
};

struct NetworkInfo {
  std::string name;
  std::string structure_hash;
  std::string json;  ///< the network JSON (docs/network-json.md)
};

struct RowCounts {
  std::int64_t layers = 0, steps = 0, tensors = 0, batches = 0, iterations = 0, samples = 0,
               transfers = 0, memory = 0, fits = 0, plans = 0;
  std::int64_t recomputes = 0;  ///< 0 in files before schema version 3
};

/// A whole run database in memory: what `info`, `trace` and the desktop app show.
struct RunData {
  std::string path;
  int schema_version = kSchemaVersion;  ///< of the file it was read from
  RunMeta meta;
  NetworkInfo network;
  std::vector<LayerRow> layers;
  std::vector<StepRow> steps;
  std::vector<TensorRow> tensors;
  std::vector<BatchRow> batches;
  std::vector<IterationRow> iterations;
  std::vector<SampleRow> samples;
  std::vector<RecomputeRow> recomputes;  ///< empty in files before schema version 3
  std::vector<TransferRow> transfers;
  std::vector<MemoryRow> memory;
  std::vector<FitRow> fits;
  std::vector<PlanRow> plans;
  /// The rows of each table it holds: RunReader::counts() of the snapshot it was loaded from.
  RowCounts counts() const;
};

/// Throws Error(BadInput) "PATH: the run ended before its network was recorded; nothing to
/// WHAT" when the run database at `path` holds no network (a run stopped in its first
/// moments): what `plan`, `compare`, `run` and the app say instead of failing on it.
void requireNetwork(const std::string& path, const NetworkInfo& network, const std::string& what);

class Database;

/// The process still writing a run database.
struct LiveWriter {
  std::int64_t pid = 0;
  std::string host;
  std::string kind;     ///< the run's kind: "profile", "run", ...
  std::string started;  ///< when the process started, ISO 8601 UTC
};

/// The live writer of the run database at `path`: its status is "running" and its writer is a
/// process on this host that is alive (not a zombie) and, where the file records it, has the
/// same start time, so that a later process with the same pid does not count. nullopt for a
/// finished or abandoned run and for a file that is not a readable run database.
std::optional<LiveWriter> liveWriter(const std::string& path);

/// Throws Error(BadInput) naming the writer's pid, host and start time if a live process is
/// still writing `path` (see liveWriter).
void refuseIfLiveWriter(const std::string& path);

class RunWriter {
 public:
  /// Creates `path` and writes the meta (status "running"). An existing file is an error unless
  /// `overwrite`, because a run database holds measurements that cannot be taken again for free;
  /// even with `overwrite`, a file that a live process is still writing is refused. An existing
  /// file that `overwrite` replaces is left as it is while the run is recorded under a sibling
  /// name (claimRecordingName, store/replace.h); finish() moves a complete run over it.
  RunWriter(const std::string& path, const RunMeta& meta, bool overwrite = false);
  /// Marks a run that was never finished as incomplete.
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  /// The network, its layers and steps, and the GMAP's tensors.
  void writeNetwork(const Network& net, const std::vector<LayerCost>& costs, const Gmap& gmap);
  void addBatch(const BatchRow& batch);
  void addIteration(const IterationRows& rows);
  /// Bulk inserts, one transaction per call.
  void addSamples(const std::vector<SampleRow>& rows);
  void addTransfers(const std::vector<TransferRow>& rows);
  void addMemory(const std::vector<MemoryRow>& rows);
  std::int64_t addFit(const FitRow& fit);  ///< returns the id
  /// Every row in one transaction: all of them are stored, or none.
  void addFits(const std::vector<FitRow>& fits);
  std::int64_t addPlan(const PlanRow& plan);
  void setMeta(const std::string& key, const std::string& value);
  /// Sets the final status, then checkpoints and leaves WAL mode. Nothing is written after.
  /// While another connection holds the file open, WAL mode cannot be left: the run still
  /// finishes, checkpoints what it can and leaves the file in WAL mode.
  /// A run that replaces an existing file moves over it here if it is complete and one
  /// self-contained file; otherwise the earlier file stays and keptNote() says where the run is.
  void finish(RunStatus status, const std::string& message = "");
  /// The file the run is in: the recording name while it replaces an existing file, the name
  /// asked for once it has replaced it (or when there was nothing to replace).
  const std::string& path() const;
  /// The name asked for.
  const std::string& target() const { return m_target; }
  /// Whether an existing file is being replaced (the run is recorded beside it).
  bool replacing() const { return m_replacing; }
  /// Where the run is recorded and what becomes of the earlier file, and the recordings of
  /// earlier runs that did not replace it (left beside it until removed); empty when not
  /// replacing.
  std::string recordingNote() const;
  /// Once the run has ended without replacing the earlier file (not complete, or the move was
  /// not safe): that the earlier file is kept, where this run is, and why. Empty otherwise.
  std::string keptNote() const;

 private:
  struct Statements;
  /// Creates the file m_path and writes the schema and `meta`.
  void create(const RunMeta& meta);
  /// A new, empty file of its own beside `target` (in its folder) to create the database in.
  static std::string claimCreatingName(const std::string& target);
  /// Closes the database created at m_path, moves it to `target` (never over a file that
  /// appeared there meanwhile; over a symbolic link to a missing file only where it replaces
  /// one) and opens `target` for the run.
  void linkIntoPlace(const std::string& target);
  void requireOpen() const;
  std::unique_ptr<Database> m_db;
  std::unique_ptr<Statements> m_st;
  std::string m_path, m_target;
  bool m_replacing = false, m_replaced = false;
  bool m_replacesLink = false;  ///< `overwrite` given for a symbolic link to a missing file
  std::string m_keptWhy;        ///< why a complete run did not replace the earlier file
  /// The earlier file's device and inode as the run started: another file renamed over it
  /// since (a concurrent run with --force) is not replaced, which would lose that run.
  std::optional<files::FileId> m_targetId;
  bool m_targetTaken = false;  ///< another file took the earlier file's name
  /// Recordings of earlier runs that did not replace the file (claimRecordingName).
  std::vector<std::string> m_earlierRecordings;
  bool m_finished = false;
};

class RunReader {
 public:
  /// Opens read-only and checks that `path` is a run database this version can read: its
  /// header, its size against the page count in the header, every table and column the reader
  /// needs, and SQLite's quick_check.
  explicit RunReader(const std::string& path);
  ~RunReader();
  RunReader(const RunReader&) = delete;
  RunReader& operator=(const RunReader&) = delete;

  int schemaVersion() const { return m_version; }
  /// The meta, with a "running" status resolved: if its writer process is gone, the run is
  /// incomplete.
  RunMeta meta();
  /// The stored network, checked: its JSON builds a network with the stored structure hash.
  /// Empty when the run ended before the network was written.
  NetworkInfo network();
  RowCounts counts();
  /// Every table, every value checked (type, range, references between tables).
  RunData load();
  const std::string& path() const;

 private:
  /// network(), and the rows of table 'layers' that the stored network gives (as the writer
  /// makes them) in `layers` when given.
  NetworkInfo readNetwork(std::vector<LayerRow>* layers);
  std::unique_ptr<Database> m_db;
  int m_version = 0;
};

}  // namespace swapscope::store
