// SPDX-License-Identifier: MIT
#include "store/run_db.h"

#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/batch_limit.h"
#include "common/error.h"
#include "graph/json_guard.h"
#include "graph/network_json.h"
#include "store/plan_file.h"
#include "store/replace.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace swapscope::store {
namespace fs = std::filesystem;
using json = nlohmann::json;

/// How long finish() waits for other connections to close before it keeps WAL mode.
constexpr int kFinishWaitMs = 1000;

std::string_view runStatusName(RunStatus s) {
  switch (s) {
    case RunStatus::Running:
      return "running";
    case RunStatus::Complete:
      return "complete";
    case RunStatus::Incomplete:
      return "incomplete";
    case RunStatus::Failed:
      return "failed";
  }
  return "?";
}

std::string_view directionName(Direction d) {
  switch (d) {
    case Direction::Forward:
      return "fwd";
    case Direction::Backward:
      return "bwd";
    case Direction::Update:
      return "update";
  }
  return "?";
}

std::string_view transferKindName(TransferKind k) {
  switch (k) {
    case TransferKind::Offload:
      return "offload";
    case TransferKind::Prefetch:
      return "prefetch";
    case TransferKind::Load:
      return "load";
    case TransferKind::Readback:
      return "readback";
  }
  return "?";
}

namespace {

/// The largest minibatch a run database may record: the limit of every verb.
constexpr std::int64_t kMaxRecordedK = kMaxBatch;

[[noreturn]] void damaged(const std::string& path, const std::string& why) {
  throwBadInput("'" + path + "' is damaged: " + why);
}

std::string hostName() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "";
  return buf.data();
}

std::string readSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

/// Fields 3 (state) and 22 (start time, clock ticks since boot) of /proc/PID/stat.
struct ProcStat {
  char state = '?';
  std::string start_ticks;
};

std::optional<ProcStat> procStat(std::int64_t pid) {
  const std::string s = readSmallFile("/proc/" + std::to_string(pid) + "/stat");
  // The command name (field 2) is in parentheses and may hold spaces and parentheses itself.
  const auto close = s.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(s.substr(close + 1));
  std::vector<std::string> fields;  // fields 3, 4, ...
  for (std::string f; rest >> f && fields.size() < 20;)
    fields.push_back(f);
  if (fields.size() < 20 || fields[0].empty()) return std::nullopt;
  return ProcStat{fields[0][0], fields[19]};
}

/// "BOOT/TICKS" for the process `pid` on this machine; empty where /proc does not say.
std::string processStart(std::int64_t pid) {
  const auto st = procStat(pid);
  const std::string boot = readSmallFile("/proc/sys/kernel/random/boot_id");
  if (!st || boot.empty()) return "";
  return boot + "/" + st->start_ticks;
}

/// When the process `pid` started, ISO 8601 UTC; empty where /proc does not say.
std::string processStartUtc(std::int64_t pid) {
  const auto st = procStat(pid);
  if (!st) return "";
  std::istringstream stat(readSmallFile("/proc/stat"));
  long long bootTime = -1;
  for (std::string line; std::getline(stat, line);) {
    if (line.rfind("btime ", 0) == 0) bootTime = std::atoll(line.c_str() + 6);
  }
  const long ticksPerSecond = sysconf(_SC_CLK_TCK);
  if (bootTime < 0 || ticksPerSecond <= 0) return "";
  const std::time_t t =
      static_cast<std::time_t>(bootTime + std::atoll(st->start_ticks.c_str()) / ticksPerSecond);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// Whether the process that wrote a run with this pid, host and start is still alive.
bool writerAlive(std::int64_t pid, const std::string& host, const std::string& start) {
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max() || host != hostName()) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  const auto st = procStat(pid);
  if (st && (st->state == 'Z' || st->state == 'X')) return false;  // exited, not yet reaped
  if (!start.empty()) {
    const std::string now = processStart(pid);
    if (!now.empty() && now != start) return false;  // a later process with the same pid
  }
  return true;
}

template <typename T>
std::string jsonArray(const std::vector<T>& v) {
  return json(v).dump();
}

/// Accepts every JSON event: a syntax check that builds nothing and does not recurse, so a
/// hostile value (deeply nested, megabytes long) costs one linear pass. Keeps where it stopped.
struct SyntaxCheck : json::json_sax_t {
  std::size_t stopped_at = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    stopped_at = position;
    return false;
  }
};

/// Why `text` is not valid JSON, bounded: its length, the byte where parsing stopped and a few
/// characters around it, never the whole value.
std::optional<std::string> jsonError(const std::string& text) {
  SyntaxCheck check;
  if (json::sax_parse(text, &check)) return std::nullopt;
  const std::size_t at = std::min(check.stopped_at > 0 ? check.stopped_at - 1 : 0, text.size());
  const std::size_t from = at > 30 ? at - 30 : 0;
  return "is not valid JSON (" + std::to_string(text.size()) + " bytes; parsing stopped at byte " +
         std::to_string(check.stopped_at) + ", near " + quoteBounded(text.substr(from, 60), 60) +
         ")";
}

/// Reads one table with every value's type and range checked. Errors name the file, the table,
/// the row's rowid, the column and the value.
class TableRows {
 public:
  static constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  static constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

  TableRows(Database& db, const char* table, std::vector<const char*> columns, const char* orderBy)
      : m_path(db.path()), m_table(table), m_columns(columns.begin(), columns.end()) {
    m_sql = "SELECT rowid";
    for (const std::string& c : m_columns)
      m_sql += std::string(", ") + c;
    m_sql += std::string(" FROM ") + table + " ORDER BY " + orderBy;
    m_st = std::make_unique<Statement>(db, m_sql.c_str());
  }
  bool next() { return m_st->step(); }
  std::int64_t rowid() const { return m_st->integer(0); }

  std::int64_t integer(int c, std::int64_t lo = kMin, std::int64_t hi = kMax) const {
    if (m_st->type(c + 1) != ValueType::Integer)
      bad(c, "holds " + describe(c) + ", not an integer");
    const std::int64_t v = m_st->integer(c + 1);
    if (v < lo || v > hi) bad(c, "is " + std::to_string(v) + rangeWhy(v, lo, hi));
    return v;
  }
  /// An `int` field: 0 .. INT_MAX unless told otherwise.
  int int32(int c, std::int64_t lo = 0, std::int64_t hi = kIntMax) const {
    return static_cast<int>(integer(c, std::max<std::int64_t>(lo, std::numeric_limits<int>::min()),
                                    std::min(hi, kIntMax)));
  }
  std::int64_t nonNegative(int c) const { return integer(c, 0); }
  bool flag(int c) const { return integer(c, 0, 1) != 0; }
  double real(int c, bool nonNegative = false) const {
    const ValueType t = m_st->type(c + 1);
    if (t != ValueType::Real && t != ValueType::Integer)
      bad(c, "holds " + describe(c) + ", not a number");
    const double v = m_st->real(c + 1);
    if (nonNegative && !(v >= 0)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      bad(c, std::string("is ") + buf + "; it cannot be negative");
    }
    return v;
  }
  std::string text(int c) const {
    if (m_st->type(c + 1) != ValueType::Text) bad(c, "holds " + describe(c) + ", not text");
    return m_st->text(c + 1);
  }
  /// A text column that must be valid JSON.
  std::string jsonText(int c) const {
    std::string v = text(c);
    if (auto why = jsonError(v)) bad(c, *why);
    return v;
  }
  std::string describe(int c) const { return m_st->describe(c + 1); }
  [[noreturn]] void bad(int c, const std::string& why) const {
    badRow(m_columns.at(c) + " " + why);
  }
  [[noreturn]] void badRow(const std::string& why) const {
    damaged(m_path, "table '" + m_table + "' row " + std::to_string(rowid()) + ": " + why);
  }

 private:
  static std::string rangeWhy(std::int64_t v, std::int64_t lo, std::int64_t hi) {
    if (v < lo && lo == 0) return "; it cannot be negative";
    if (v < lo && hi == kMax) return "; it must be " + std::to_string(lo) + " or more";
    return ", outside " + std::to_string(lo) + ".." + std::to_string(hi);
  }

  std::string m_path, m_table;
  std::vector<std::string> m_columns;
  std::string m_sql;
  std::unique_ptr<Statement> m_st;
};

template <typename T>
std::vector<T> parseArray(const TableRows& rows, int c) {
  const std::string text = rows.text(c);
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array()) {
    rows.bad(c, "is " + quoteBounded(text) + ", not a JSON array");
  }
  try {
    return j.get<std::vector<T>>();
  } catch (const json::exception&) {
    rows.bad(c, "is " + quoteBounded(text) + ", which holds a value of the wrong type");
  }
}

Direction directionFromName(const TableRows& rows, int c, bool update) {
  const std::string s = rows.text(c);
  for (Direction v : {Direction::Forward, Direction::Backward, Direction::Update}) {
    if (s == directionName(v) && (update || v != Direction::Update)) return v;
  }
  rows.bad(c, "is " + quoteBounded(s) + (update ? ", not fwd, bwd or update" : ", not fwd or bwd"));
}

/// Every table of the schema with its columns, from kSchemaSql itself.
const std::vector<std::pair<std::string, std::vector<std::string>>>& schemaTables() {
  static const auto tables = [] {
    Database mem(":memory:", Database::Mode::Create);
    mem.exec(kSchemaSql);
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    Statement names(mem, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY rowid");
    while (names.step())
      out.push_back({names.text(0), {}});
    for (auto& [table, columns] : out) {
      Statement cols(mem, "SELECT name FROM pragma_table_info(?1) ORDER BY cid");
      cols.bind(1, table);
      while (cols.step())
        columns.push_back(cols.text(0));
    }
    return out;
  }();
  return tables;
}

bool addedInVersion2(std::string_view table, std::string_view column) {
  for (const auto& [t, c] : kVersion2Columns) {
    if (t == table && c == column) return true;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Writer

struct RunWriter::Statements {
  explicit Statements(Database& db)
      : meta(db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)"),
        iteration(db,
                  "INSERT INTO iterations(k, iteration, start_ns, duration_ns, loss, stall_ns, "
                  "offload_bytes, prefetch_bytes, load_bytes) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)"),
        sample(db,
               "INSERT INTO samples(k, iteration, step, layer, direction, flops, start_ns, "
               "time_ns, stall_ns, ready_ns, copy_overlap_ns) "
               "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"),
        transfer(
            db,
            "INSERT INTO transfers(k, iteration, kind, direction, tensor, step, bytes, "
            "start_ns, end_ns, pinned, overlap_ns) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"),
        memory(db, "INSERT INTO memory(k, iteration, time_ns, in_use) VALUES (?1,?2,?3,?4)"),
        recompute(db,
                  "INSERT INTO recomputes(k, iteration, step, layer, flops, start_ns, time_ns) "
                  "VALUES (?1,?2,?3,?4,?5,?6,?7)") {}
  Statement meta, iteration, sample, transfer, memory, recompute;

  void insert(const RecomputeRow& r) {
    recompute.bind(1, r.k).bind(2, r.iteration).bind(3, r.step).bind(4, r.layer);
    recompute.bind(5, r.flops).bind(6, r.start_ns).bind(7, r.time_ns).run();
  }

  void insert(const SampleRow& r) {
    sample.bind(1, r.k).bind(2, r.iteration).bind(3, r.step).bind(4, r.layer);
    sample.bind(5, directionName(r.direction)).bind(6, r.flops).bind(7, r.start_ns);
    sample.bind(8, r.time_ns).bind(9, r.stall_ns).bind(10, r.ready_ns);
    sample.bind(11, r.copy_overlap_ns).run();
  }
  void insert(const TransferRow& r) {
    transfer.bind(1, r.k).bind(2, r.iteration).bind(3, transferKindName(r.kind));
    transfer.bind(4, r.to_host ? "d2h" : "h2d").bind(5, r.tensor).bind(6, r.step);
    transfer.bind(7, r.bytes).bind(8, r.start_ns).bind(9, r.end_ns).bind(10, r.pinned ? 1 : 0);
    transfer.bind(11, r.overlap_ns).run();
  }
  void insert(const MemoryRow& r) {
    memory.bind(1, r.k).bind(2, r.iteration).bind(3, r.time_ns).bind(4, r.in_use).run();
  }
};

RunWriter::RunWriter(const std::string& path, const RunMeta& meta, bool overwrite)
    : m_path(path), m_target(path) {
  std::error_code ec;
  if (fs::exists(path, ec)) {
    if (!overwrite) {
      throwBadInput("'" + path +
                    "' already exists; a run database is only replaced when asked (--force)");
    }
    refuseIfLiveWriter(path);
    // The earlier file stays as it is until a complete run replaces it (finish()).
    m_path = claimRecordingName(path);
    m_replacing = true;
  }
  try {
    create(meta);
  } catch (...) {
    m_st.reset();
    m_db.reset();
    if (m_replacing) {  // nothing was recorded: the claimed name goes
      for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        fs::remove(m_path + suffix, ec);
    }
    throw;
  }
}

void RunWriter::create(const RunMeta& meta) {
  m_db = std::make_unique<Database>(m_path, Database::Mode::Create);
  m_db->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
  {
    Transaction tx(*m_db);
    m_db->exec(("PRAGMA application_id = " + std::to_string(kApplicationId) +
                "; PRAGMA user_version = " + std::to_string(kSchemaVersion) + ";")
                   .c_str());
    m_db->exec(kSchemaSql);
    m_st = std::make_unique<Statements>(*m_db);
    json versions(meta.versions);
    const std::pair<const char*, std::string> rows[] = {
        {"kind", meta.kind},
        {"backend", meta.backend},
        {"device", meta.device},
        {"device_memory", std::to_string(meta.device_memory)},
        {"versions", versions.dump()},
        {"command_line", meta.command_line},
        {"started_utc", meta.started_utc},
        {"budget", std::to_string(meta.budget)},
        {"policy", meta.policy},
        {"host_cpu", meta.host_cpu},
        {"status", std::string(runStatusName(RunStatus::Running))},
        {"status_message", ""},
        {"writer_pid", std::to_string(getpid())},
        {"writer_host", hostName()},
        {"writer_start", processStart(getpid())},
    };
    for (const auto& [key, value] : rows)
      m_st->meta.bind(1, key).bind(2, value).run();
    for (const auto& [key, value] : meta.extra)
      m_st->meta.bind(1, key).bind(2, value).run();
    if (m_replacing) m_st->meta.bind(1, std::string("replaces")).bind(2, m_target).run();
    tx.commit();
  }
  // The header (application id, schema version) reaches the main file at once, so that even a
  // run killed in its first second is recognisable.
  m_db->exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

RunWriter::~RunWriter() {
  if (m_finished || !m_db) return;
  try {
    finish(RunStatus::Incomplete, "the run ended before it finished");
  } catch (...) {  // a destructor must not throw; the file still reads as incomplete
  }
}

void RunWriter::requireOpen() const {
  if (m_finished) {
    throw Error(ErrorKind::Runtime, "'" + m_path + "': written to after the run finished");
  }
}

const std::string& RunWriter::path() const {
  return m_path;
}

std::string RunWriter::recordingNote() const {
  if (!m_replacing) return "";
  return "recording into '" + m_path + "'; it replaces '" + m_target +
         "' once the run completes (until then, or if it does not complete, '" + m_target +
         "' keeps the earlier run)";
}

std::string RunWriter::keptNote() const {
  // Also where finish() itself failed (a full disk): the earlier file was never touched.
  if (!m_replacing || m_replaced) return "";
  return "'" + m_target + "' still holds the earlier run; this run is in '" + m_path + "'" +
         (m_keptWhy.empty() ? std::string(" (it did not complete)")
                            : " (it was not moved over '" + m_target + "': " + m_keptWhy + ")");
}

void RunWriter::setMeta(const std::string& key, const std::string& value) {
  requireOpen();
  m_st->meta.bind(1, key).bind(2, value).run();
}

void RunWriter::writeNetwork(const Network& net, const std::vector<LayerCost>& costs,
                             const Gmap& gmap) {
  requireOpen();
  Transaction tx(*m_db);
  {
    Statement st(*m_db, "INSERT INTO network(id, name, structure_hash, json) VALUES (1,?1,?2,?3)");
    st.bind(1, net.name()).bind(2, net.structureHash()).bind(3, networkToText(net)).run();
  }
  {
    Statement st(*m_db,
                 "INSERT INTO layers(id, name, kind, inputs, out_shape, params, fwd_flops, "
                 "bwd_data_flops, bwd_weight_flops, fm_fixed, fm_per_sample) "
                 "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)");
    for (int i = 0; i < net.size(); ++i) {
      const LayerCost& c = costs.at(static_cast<std::size_t>(i));
      st.bind(1, i).bind(2, net.layer(i).name).bind(3, layerKindName(net.layer(i).kind));
      st.bind(4, jsonArray(net.inputsOf(i))).bind(5, jsonArray(net.outputShape(i).dims));
      st.bind(6, c.params).bind(7, c.fwd_flops).bind(8, c.bwd_data_flops);
      st.bind(9, c.bwd_weight_flops).bind(10, c.fm.fixed).bind(11, c.fm.per_sample).run();
    }
  }
  {
    Statement st(
        *m_db, "INSERT INTO steps(step, layer, direction, flops_per_sample) VALUES (?1,?2,?3,?4)");
    for (int s = 1; s <= gmap.steps(); ++s) {
      const int layer = gmap.step_layer.at(static_cast<std::size_t>(s));
      const LayerCost& c = costs.at(static_cast<std::size_t>(layer));
      const bool bwd = gmap.isBackwardStep(s);
      st.bind(1, s).bind(2, layer).bind(
          3, directionName(bwd ? Direction::Backward : Direction::Forward));
      st.bind(4, bwd ? c.bwd_data_flops + c.bwd_weight_flops : c.fwd_flops).run();
    }
  }
  {
    Statement st(*m_db,
                 "INSERT INTO tensors(id, name, kind, layer, size_fixed, size_per_sample) "
                 "VALUES (?1,?2,?3,?4,?5,?6)");
    for (std::size_t b = 0; b < gmap.buffers.size(); ++b) {
      const GmapBuffer& buf = gmap.buffers[b];
      st.bind(1, static_cast<std::int64_t>(b)).bind(2, buf.name).bind(3, bufferKindName(buf.kind));
      st.bind(4, buf.layer).bind(5, buf.size.fixed).bind(6, buf.size.per_sample).run();
    }
  }
  tx.commit();
}

void RunWriter::addBatch(const BatchRow& b) {
  requireOpen();
  Statement st(*m_db,
               "INSERT OR REPLACE INTO batches(k, policy, warmup, predicted_peak, measured_peak, "
               "reuse_delay, hoisted_prefetches, dispatch_ns) VALUES (?1,?2,?3,?4,?5,?6,?7,?8)");
  st.bind(1, b.k).bind(2, b.policy).bind(3, b.warmup).bind(4, b.predicted_peak);
  st.bind(5, b.measured_peak).bind(6, b.reuse_delay).bind(7, b.hoisted_prefetches);
  st.bind(8, b.dispatch_ns).run();
}

void RunWriter::addIteration(const IterationRows& rows) {
  requireOpen();
  Transaction tx(*m_db);
  const IterationRow& it = rows.iteration;
  Statement& st = m_st->iteration;
  st.bind(1, it.k).bind(2, it.iteration).bind(3, it.start_ns).bind(4, it.duration_ns);
  st.bind(5, it.loss).bind(6, it.stall_ns).bind(7, it.offload_bytes);
  st.bind(8, it.prefetch_bytes).bind(9, it.load_bytes).run();
  for (const SampleRow& r : rows.samples)
    m_st->insert(r);
  for (const RecomputeRow& r : rows.recomputes)
    m_st->insert(r);
  for (const TransferRow& r : rows.transfers)
    m_st->insert(r);
  for (const MemoryRow& r : rows.memory)
    m_st->insert(r);
  tx.commit();
}

void RunWriter::addSamples(const std::vector<SampleRow>& rows) {
  requireOpen();
  Transaction tx(*m_db);
  for (const SampleRow& r : rows)
    m_st->insert(r);
  tx.commit();
}

void RunWriter::addTransfers(const std::vector<TransferRow>& rows) {
  requireOpen();
  Transaction tx(*m_db);
  for (const TransferRow& r : rows)
    m_st->insert(r);
  tx.commit();
}

void RunWriter::addMemory(const std::vector<MemoryRow>& rows) {
  requireOpen();
  Transaction tx(*m_db);
  for (const MemoryRow& r : rows)
    m_st->insert(r);
  tx.commit();
}

std::int64_t RunWriter::addFit(const FitRow& f) {
  requireOpen();
  Statement st(*m_db,
               "INSERT INTO fits(scope, target, direction, form, params, points, rmse, "
               "max_rel_error, chosen) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9) RETURNING id");
  st.bind(1, f.scope).bind(2, f.target).bind(3, f.direction).bind(4, f.form).bind(5, f.params);
  st.bind(6, f.points).bind(7, f.rmse).bind(8, f.max_rel_error).bind(9, f.chosen ? 1 : 0);
  if (!st.step()) m_db->fail(1, "inserting a fit");
  const std::int64_t id = st.integer(0);
  st.run();
  return id;
}

void RunWriter::addFits(const std::vector<FitRow>& fits) {
  requireOpen();
  Transaction tx(*m_db);
  for (const FitRow& f : fits)
    addFit(f);
  tx.commit();
}

std::int64_t RunWriter::addPlan(const PlanRow& p) {
  requireOpen();
  Statement st(*m_db,
               "INSERT INTO plans(created_utc, policy, mode, budget, k, predicted_iter_ns, json) "
               "VALUES (?1,?2,?3,?4,?5,?6,?7) RETURNING id");
  st.bind(1, p.created_utc).bind(2, p.policy).bind(3, p.mode).bind(4, p.budget).bind(5, p.k);
  st.bind(6, p.predicted_iter_ns).bind(7, p.json);
  if (!st.step()) m_db->fail(1, "inserting a plan");
  const std::int64_t id = st.integer(0);
  st.run();
  return id;
}

void RunWriter::finish(RunStatus status, const std::string& message) {
  if (m_finished) return;
  {
    Transaction tx(*m_db);
    setMeta("status", std::string(runStatusName(status)));
    setMeta("status_message", message);
    m_db->exec(kIndexSql);
    tx.commit();
  }
  m_finished = true;
  // Leaving WAL mode makes the finished run one self-contained file, but needs the file to
  // itself: a reader that holds it open (the app, `info`, a copy in progress) keeps it in WAL
  // mode. The run is finished either way; the file then stays in WAL mode, with what the
  // checkpoint could not copy into it in the -wal next to it, and reads the same.
  m_db->setBusyTimeout(kFinishWaitMs);
  const int rc = m_db->tryExec("PRAGMA journal_mode = DELETE");
  m_db->setBusyTimeout(Database::kBusyTimeoutMs);
  const int primary = rc & 0xff;
  if (rc != SQLITE_OK) {
    if (primary != SQLITE_BUSY && primary != SQLITE_LOCKED)
      m_db->fail(rc, "leaving WAL mode (PRAGMA journal_mode = DELETE)");
    m_db->tryExec("PRAGMA wal_checkpoint(PASSIVE)");
  }
  if (!m_replacing || status != RunStatus::Complete) return;
  // A complete run replaces the earlier file only as one self-contained file: a rename moves
  // no -wal with it.
  if (rc != SQLITE_OK) {
    m_keptWhy = "another process held it open as the run ended, so its -wal is beside it";
    return;
  }
  m_st.reset();
  m_db.reset();
  m_keptWhy = replaceWithRecording(m_path, m_target);
  if (!m_keptWhy.empty()) return;
  m_replaced = true;
  m_path = m_target;
}

// ---------------------------------------------------------------------------------------------
// Reader

namespace {

RunStatus statusFromName(const std::string& path, const std::string& s) {
  for (RunStatus v :
       {RunStatus::Running, RunStatus::Complete, RunStatus::Incomplete, RunStatus::Failed}) {
    if (s == runStatusName(v)) return v;
  }
  damaged(path,
          "meta 'status' is " + quoteBounded(s) + ", not running, complete, incomplete or failed");
}

TransferKind transferKindFromName(const TableRows& rows, int c) {
  const std::string s = rows.text(c);
  for (TransferKind v : {TransferKind::Offload, TransferKind::Prefetch, TransferKind::Load,
                         TransferKind::Readback}) {
    if (s == transferKindName(v)) return v;
  }
  rows.bad(c, "is " + quoteBounded(s) + ", not offload, prefetch, load or readback");
}

std::uint32_t bigEndian(const unsigned char* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v = (v << 8) | p[i];
  return v;
}

/// The file's length against its header (https://sqlite.org/fileformat.html): whole pages, and
/// at least the pages the header counts. SQLite reads a page cut short as zeros, so its
/// quick_check does not see a file cut by a few bytes.
void checkFileSize(const std::string& path, const std::array<unsigned char, 100>& header,
                   std::uintmax_t size) {
  std::uint32_t pageSize = bigEndian(&header[16], 2);
  if (pageSize == 1) pageSize = 65536;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) != 0) {
    damaged(path, "its header gives a page size of " + std::to_string(pageSize) +
                      " bytes, not a power of two from 512 to 65536");
  }
  if (size % pageSize != 0) {
    damaged(path, "it is " + std::to_string(size) + " bytes long, not a whole number of " +
                      std::to_string(pageSize) +
                      "-byte pages: it was cut short or bytes were appended");
  }
  // While a -wal with frames is next to it, the main file may lag behind the header (a
  // checkpoint writes page 1 first); the -wal then holds those pages.
  std::error_code ec;
  const auto wal = fs::file_size(path + "-wal", ec);
  if (!ec && wal > 0) return;
  const std::uint32_t pages = bigEndian(&header[28], 4);
  const bool pagesValid = pages > 0 && bigEndian(&header[24], 4) == bigEndian(&header[92], 4);
  if (pagesValid && size < std::uintmax_t{pages} * pageSize) {
    damaged(path, "its header counts " + std::to_string(pages) + " pages of " +
                      std::to_string(pageSize) + " bytes (" +
                      std::to_string(std::uintmax_t{pages} * pageSize) + " bytes), but it is " +
                      std::to_string(size) + " bytes long: it was cut short");
  }
}

}  // namespace

RunReader::RunReader(const std::string& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throwBadInput("cannot open '" + path + "': no such file");
  if (!fs::is_regular_file(status)) throwBadInput("cannot open '" + path + "': not a regular file");
  const auto size = fs::file_size(path, ec);
  if (size == 0 && !fs::exists(path + "-wal", ec)) {
    throwBadInput("'" + path + "' is empty (0 bytes), not a Swapscope run database");
  }
  if (size > 0) {
    std::array<unsigned char, 100> header{};
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throwBadInput("cannot open '" + path + "': " + std::strerror(errno));
    const std::size_t got = std::fread(header.data(), 1, header.size(), f);
    std::fclose(f);
    static constexpr char kMagic[16] = "SQLite format 3";  // with its terminating NUL
    if (got < 16 || !std::equal(kMagic, kMagic + 16, header.begin())) {
      throwBadInput("'" + path +
                    "' is not a Swapscope run database: it is not an SQLite file (no SQLite "
                    "header)");
    }
    if (got < header.size()) {
      damaged(path, "it is " + std::to_string(size) +
                        " bytes long, shorter than the 100-byte SQLite header");
    }
    checkFileSize(path, header, size);
  }
  m_db = std::make_unique<Database>(path, Database::Mode::ReadOnly);
  const auto appId = m_db->queryInt("PRAGMA application_id");
  if (appId != kApplicationId) {
    if (appId == 0) {
      throwBadInput("'" + path +
                    "' is an SQLite database but not a Swapscope run database (it has no "
                    "Swapscope application id)");
    }
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08llx",
                  static_cast<unsigned long long>(static_cast<std::uint32_t>(appId)));
    throwBadInput("'" + path + "' belongs to another application (SQLite application id " + hex +
                  "), not Swapscope");
  }
  m_version = static_cast<int>(m_db->queryInt("PRAGMA user_version"));
  if (m_version > kSchemaVersion) {
    throwBadInput("'" + path + "' has run-database schema version " + std::to_string(m_version) +
                  ", newer than this Swapscope reads (" + std::to_string(kSchemaVersion) +
                  "); use a newer Swapscope");
  }
  if (m_version < 1) {
    throwBadInput("'" + path +
                  "' has no run-database schema version; it was not finished by "
                  "Swapscope's writer");
  }
  {
    Statement check(*m_db, "PRAGMA quick_check(1)");
    if (check.step() && check.text(0) != "ok") {
      damaged(path, quoteBounded(check.text(0), 200) + " (SQLite's quick_check)");
    }
  }
  // Every table and column the reader reads, so that a dropped or altered table is named here
  // rather than failing a query later.
  for (const auto& [table, columns] : schemaTables()) {
    if (m_version < 3 && table == kVersion3Table) continue;
    Statement kind(*m_db, "SELECT type FROM sqlite_schema WHERE name = ?1");
    kind.bind(1, table);
    if (!kind.step()) damaged(path, "table '" + table + "' is missing");
    if (kind.text(0) != "table") {
      damaged(path, "'" + table + "' is a " + quoteBounded(kind.text(0)) + ", not a table");
    }
    Statement have(*m_db, "SELECT name FROM pragma_table_info(?1)");
    have.bind(1, table);
    std::set<std::string> present;
    while (have.step())
      present.insert(have.text(0));
    std::string select = "SELECT rowid";
    for (const std::string& c : columns) {
      if (m_version < 2 && addedInVersion2(table, c)) continue;
      if (!present.count(c)) damaged(path, "table '" + table + "' has no column '" + c + "'");
      select += ", " + c;
    }
    select += " FROM " + table + " LIMIT 0";
    if (m_db->tryExec(select.c_str()) != SQLITE_OK) {
      damaged(path, "table '" + table + "' cannot be read: " + m_db->lastError());
    }
  }
}

RunReader::~RunReader() = default;

const std::string& RunReader::path() const {
  return m_db->path();
}

RunMeta RunReader::meta() {
  RunMeta m;
  std::map<std::string, std::string> kv;
  {
    TableRows rows(*m_db, "meta", {"key", "value"}, "key");
    while (rows.next()) {
      std::string key = rows.text(0);
      kv[std::move(key)] = rows.text(1);
    }
  }
  auto take = [&](const char* key) {
    auto it = kv.find(key);
    if (it == kv.end()) damaged(path(), std::string("meta has no '") + key + "'");
    std::string v = std::move(it->second);
    kv.erase(it);
    return v;
  };
  auto takeInt = [&](const char* key) {
    const std::string v = take(key);
    try {
      std::size_t used = 0;
      const long long n = std::stoll(v, &used);
      if (used == v.size() && n >= 0) return static_cast<std::int64_t>(n);
    } catch (const std::exception&) {
    }
    damaged(path(), std::string("meta '") + key + "' is " + quoteBounded(v) +
                        ", not an integer of 0 or more");
  };
  m.kind = take("kind");
  m.backend = take("backend");
  m.device = take("device");
  m.device_memory = takeInt("device_memory");
  {
    const std::string text = take("versions");
    // Depth first: a deeply nested value would overflow the stack when parsed or echoed.
    const json v =
        jsonTooDeepAt(text) ? json(json::value_t::discarded) : json::parse(text, nullptr, false);
    if (v.is_discarded() || !v.is_object()) {
      damaged(path(), "meta 'versions' is " + quoteBounded(text) + ", not a JSON object");
    }
    for (const auto& [name, value] : v.items()) {
      m.versions[name] = value.is_string() ? value.get<std::string>() : echoJson(value);
    }
  }
  m.command_line = take("command_line");
  m.started_utc = take("started_utc");
  m.budget = takeInt("budget");
  m.policy = take("policy");
  m.host_cpu = take("host_cpu");
  m.status = statusFromName(path(), take("status"));
  m.status_message = take("status_message");
  m.writer_pid = takeInt("writer_pid");
  m.writer_host = take("writer_host");
  if (kv.count("writer_start")) m.writer_start = take("writer_start");
  m.extra = std::move(kv);
  if (m.status == RunStatus::Running && !writerAlive(m.writer_pid, m.writer_host, m.writer_start)) {
    m.status = RunStatus::Incomplete;
    m.status_message = "the writing process (pid " + std::to_string(m.writer_pid) + " on " +
                       m.writer_host + ") ended without finishing the run";
  }
  return m;
}

NetworkInfo RunReader::network() {
  return readNetwork(nullptr);
}

NetworkInfo RunReader::readNetwork(std::vector<std::string>* layerNames) {
  TableRows rows(*m_db, "network", {"name", "structure_hash", "json"}, "rowid");
  NetworkInfo n;
  if (!rows.next()) return n;
  n = {rows.text(0), rows.text(1), rows.text(2)};
  if (auto why = jsonError(n.json)) rows.bad(2, *why);
  // The origin the verbs name the stored network by.
  const std::string origin = path() + " (network)";
  Network net = [&] {
    try {
      // From the text: its depth is checked before anything recursive runs (converting a
      // parsed document recurses once per level).
      return networkFromText(n.json, origin);
    } catch (const Error& e) {
      throw Error(ErrorKind::BadInput, e.what());
    } catch (const json::exception& e) {
      throwBadInput(origin + ": " + quoteBounded(e.what(), 160));
    }
  }();
  if (net.structureHash() != n.structure_hash) {
    rows.badRow("the network in column 'json' has structure hash " + net.structureHash() +
                ", not the stored structure_hash " + quoteBounded(n.structure_hash));
  }
  if (layerNames) {
    for (int i = 0; i < net.size(); ++i)
      layerNames->push_back(net.layer(i).name);
  }
  return n;
}

RowCounts RunReader::counts() {
  auto count = [&](const char* sql) { return m_db->queryInt(sql); };
  RowCounts c;
  c.layers = count("SELECT count(*) FROM layers");
  c.steps = count("SELECT count(*) FROM steps");
  c.tensors = count("SELECT count(*) FROM tensors");
  c.batches = count("SELECT count(*) FROM batches");
  c.iterations = count("SELECT count(*) FROM iterations");
  c.samples = count("SELECT count(*) FROM samples");
  c.transfers = count("SELECT count(*) FROM transfers");
  c.memory = count("SELECT count(*) FROM memory");
  c.fits = count("SELECT count(*) FROM fits");
  c.plans = count("SELECT count(*) FROM plans");
  if (m_version >= 3) c.recomputes = count("SELECT count(*) FROM recomputes");
  return c;
}

RunData RunReader::load() {
  RunData d;
  d.path = path();
  d.schema_version = m_version;
  const bool v2 = m_version >= 2;  // the columns of kVersion2Columns
  d.meta = meta();
  std::vector<std::string> networkLayers;
  d.network = readNetwork(&networkLayers);
  const std::string& p = d.path;
  {
    TableRows rows(*m_db, "layers",
                   {"id", "name", "kind", "inputs", "out_shape", "params", "fwd_flops",
                    "bwd_data_flops", "bwd_weight_flops", "fm_fixed", "fm_per_sample"},
                   "id");
    while (rows.next()) {
      LayerRow r;
      const auto expected = static_cast<std::int64_t>(d.layers.size());
      r.id = rows.int32(0);
      if (r.id != expected) {
        rows.bad(0, "is " + std::to_string(r.id) +
                        "; layer ids run 0, 1, 2, ... without gaps, so " +
                        std::to_string(expected) + " comes first");
      }
      r.name = rows.text(1);
      r.kind = rows.text(2);
      r.inputs = parseArray<int>(rows, 3);
      for (const int in : r.inputs) {
        if (in < 0 || in >= r.id) {
          rows.bad(3, "names layer " + std::to_string(in) + ", which is not an earlier layer");
        }
      }
      r.out_shape = parseArray<std::int64_t>(rows, 4);
      for (const std::int64_t dim : r.out_shape) {
        if (dim <= 0) rows.bad(4, "has a dimension of " + std::to_string(dim));
      }
      r.params = rows.nonNegative(5);
      r.fwd_flops = rows.nonNegative(6);
      r.bwd_data_flops = rows.nonNegative(7);
      r.bwd_weight_flops = rows.nonNegative(8);
      r.fm = {rows.nonNegative(9), rows.nonNegative(10)};
      if (!networkLayers.empty()) {
        if (d.layers.size() >= networkLayers.size()) {
          rows.badRow("the stored network has only " + std::to_string(networkLayers.size()) +
                      " layers");
        }
        if (r.name != networkLayers[d.layers.size()]) {
          rows.bad(1, "is " + quoteBounded(r.name) + ", but layer " + std::to_string(r.id) +
                          " of the stored network is " +
                          quoteBounded(networkLayers[d.layers.size()]));
        }
      }
      d.layers.push_back(std::move(r));
    }
  }
  if (d.layers.size() != networkLayers.size()) {
    damaged(p, "table 'layers' has " + std::to_string(d.layers.size()) +
                   " rows, but the stored network (table 'network') has " +
                   std::to_string(networkLayers.size()) + " layers");
  }
  const auto layerCount = static_cast<std::int64_t>(d.layers.size());
  {
    TableRows rows(*m_db, "steps", {"step", "layer", "direction", "flops_per_sample"}, "step");
    while (rows.next()) {
      StepRow r;
      const auto expected = static_cast<std::int64_t>(d.steps.size()) + 1;
      r.step = rows.int32(0);
      if (r.step != expected) {
        rows.bad(0, "is " + std::to_string(r.step) + "; steps run 1, 2, 3, ... without gaps, so " +
                        std::to_string(expected) + " comes first");
      }
      r.layer = rows.int32(1, 0, layerCount - 1);
      r.direction = directionFromName(rows, 2, false);
      r.flops_per_sample = rows.nonNegative(3);
      d.steps.push_back(r);
    }
  }
  // The SGD update of every layer is one step past the last compute step.
  const auto updateStep = static_cast<std::int64_t>(d.steps.size()) + 1;
  {
    TableRows rows(*m_db, "tensors",
                   {"id", "name", "kind", "layer", "size_fixed", "size_per_sample"}, "id");
    while (rows.next()) {
      TensorRow r;
      const auto expected = static_cast<std::int64_t>(d.tensors.size());
      r.id = rows.int32(0);
      if (r.id != expected) {
        rows.bad(0, "is " + std::to_string(r.id) +
                        "; tensor ids run 0, 1, 2, ... without gaps, so " +
                        std::to_string(expected) + " comes first");
      }
      r.name = rows.text(1);
      r.kind = rows.text(2);
      r.layer = rows.int32(3, -1, layerCount - 1);  // -1: no layer (the labels)
      r.size = {rows.nonNegative(4), rows.nonNegative(5)};
      d.tensors.push_back(std::move(r));
    }
  }
  {
    std::vector<const char*> columns{"k",
                                     "policy",
                                     "warmup",
                                     "predicted_peak",
                                     "measured_peak",
                                     "reuse_delay",
                                     "hoisted_prefetches"};
    if (v2) columns.push_back("dispatch_ns");
    TableRows rows(*m_db, "batches", std::move(columns), "k");
    while (rows.next()) {
      d.batches.push_back({rows.integer(0, 1, kMaxRecordedK), rows.text(1), rows.int32(2),
                           rows.nonNegative(3), rows.nonNegative(4), rows.int32(5), rows.int32(6),
                           v2 ? rows.integer(7, -1) : -1});
    }
  }
  std::set<std::pair<std::int64_t, int>> recorded;                  // (k, iteration)
  std::map<std::pair<std::int64_t, int>, std::int64_t> durationOf;  // (k, iteration) -> ns
  {
    TableRows rows(*m_db, "iterations",
                   {"k", "iteration", "start_ns", "duration_ns", "loss", "stall_ns",
                    "offload_bytes", "prefetch_bytes", "load_bytes"},
                   "k, iteration");
    while (rows.next()) {
      const IterationRow r{rows.integer(0, 1, kMaxRecordedK),
                           rows.int32(1),
                           rows.nonNegative(2),
                           rows.integer(3, 1),
                           rows.real(4),
                           rows.nonNegative(5),
                           rows.nonNegative(6),
                           rows.nonNegative(7),
                           rows.nonNegative(8)};
      if (!recorded.insert({r.k, r.iteration}).second) {
        rows.badRow("k " + std::to_string(r.k) + " iteration " + std::to_string(r.iteration) +
                    " is recorded twice");
      }
      durationOf[{r.k, r.iteration}] = r.duration_ns;
      d.iterations.push_back(r);
    }
  }
  // Rows of an iteration are written in one transaction with its iterations row.
  // Rows come ordered by (k, iteration): one lookup per iteration, not per row.
  std::pair<std::int64_t, int> lastFound{0, -1};
  const auto requireIteration = [&](const TableRows& rows, std::int64_t k, int iteration) {
    if (std::pair{k, iteration} == lastFound) return;
    if (recorded.count({k, iteration})) {
      lastFound = {k, iteration};
    } else {
      rows.badRow("k " + std::to_string(k) + " iteration " + std::to_string(iteration) +
                  " has no row in table 'iterations'");
    }
  };
  {
    std::vector<const char*> columns{"k",     "iteration", "step",    "layer",   "direction",
                                     "flops", "start_ns",  "time_ns", "stall_ns"};
    if (v2) {
      columns.push_back("ready_ns");
      columns.push_back("copy_overlap_ns");
    }
    TableRows rows(*m_db, "samples", std::move(columns), "k, iteration, start_ns, step, layer");
    while (rows.next()) {
      SampleRow r;
      r.k = rows.integer(0, 1, kMaxRecordedK);
      r.iteration = rows.int32(1);
      requireIteration(rows, r.k, r.iteration);
      r.step = rows.int32(2);
      r.layer = rows.int32(3);
      if (r.layer >= layerCount) {
        rows.bad(3, "is " + std::to_string(r.layer) + ", but table 'layers' has " +
                        (layerCount ? "layers 0.." + std::to_string(layerCount - 1) : "no layers"));
      }
      r.direction = directionFromName(rows, 4, true);
      if (r.direction == Direction::Update) {
        if (r.step != updateStep) {
          rows.bad(2, "is " + std::to_string(r.step) + ", but the update step is " +
                          std::to_string(updateStep));
        }
      } else {
        if (r.step < 1 || r.step >= updateStep) {
          rows.bad(
              2, "is " + std::to_string(r.step) + ", but table 'steps' has " +
                     (updateStep > 1 ? "steps 1.." + std::to_string(updateStep - 1) : "no steps"));
        }
        const StepRow& s = d.steps[static_cast<std::size_t>(r.step - 1)];
        if (s.layer != r.layer || s.direction != r.direction) {
          rows.badRow("layer " + std::to_string(r.layer) + " " +
                      std::string(directionName(r.direction)) + " does not match step " +
                      std::to_string(r.step) + " (layer " + std::to_string(s.layer) + " " +
                      std::string(directionName(s.direction)) + ")");
        }
      }
      r.flops = rows.nonNegative(5);
      r.start_ns = rows.nonNegative(6);
      r.time_ns = rows.nonNegative(7);
      // A step runs inside its iteration: a longer one is damage, and it would drive the fits.
      if (const std::int64_t iter = durationOf.at({r.k, r.iteration}); r.time_ns > iter) {
        rows.bad(7, "is " + std::to_string(r.time_ns) + ", longer than its iteration (" +
                        std::to_string(iter) + " ns)");
      }
      r.stall_ns = rows.nonNegative(8);
      if (v2) {
        r.ready_ns = rows.integer(9, -1);  // -1: not recorded
        r.copy_overlap_ns = rows.integer(10, -1, r.time_ns);
      }
      d.samples.push_back(r);
    }
  }
  if (m_version >= 3) {
    TableRows rows(*m_db, "recomputes",
                   {"k", "iteration", "step", "layer", "flops", "start_ns", "time_ns"},
                   "k, iteration, start_ns, rowid");
    while (rows.next()) {
      RecomputeRow r;
      r.k = rows.integer(0, 1, kMaxRecordedK);
      r.iteration = rows.int32(1);
      requireIteration(rows, r.k, r.iteration);
      r.step = rows.int32(2);
      // A recompute runs inside a backward step, re-making the output of a layer.
      if (r.step < 1 || r.step >= updateStep ||
          d.steps[static_cast<std::size_t>(r.step - 1)].direction != Direction::Backward) {
        rows.bad(2, "is " + std::to_string(r.step) + ", not a backward step of table 'steps'");
      }
      r.layer = rows.int32(3);
      if (r.layer < 0 || r.layer >= layerCount) {
        rows.bad(3, "is " + std::to_string(r.layer) + ", but table 'layers' has " +
                        (layerCount ? "layers 0.." + std::to_string(layerCount - 1) : "no layers"));
      }
      r.flops = rows.nonNegative(4);
      r.start_ns = rows.nonNegative(5);
      r.time_ns = rows.nonNegative(6);
      if (const std::int64_t iter = durationOf.at({r.k, r.iteration}); r.time_ns > iter) {
        rows.bad(6, "is " + std::to_string(r.time_ns) + ", longer than its iteration (" +
                        std::to_string(iter) + " ns)");
      }
      d.recomputes.push_back(r);
    }
  }
  const auto tensorCount = static_cast<std::int64_t>(d.tensors.size());
  {
    TableRows rows(*m_db, "transfers",
                   {"k", "iteration", "kind", "direction", "tensor", "step", "bytes", "start_ns",
                    "end_ns", "pinned", "overlap_ns"},
                   "k, iteration, start_ns, rowid");
    while (rows.next()) {
      TransferRow r;
      r.k = rows.integer(0, 1, kMaxRecordedK);
      r.iteration = rows.int32(1);
      requireIteration(rows, r.k, r.iteration);
      r.kind = transferKindFromName(rows, 2);
      const std::string dir = rows.text(3);
      const bool toHost = r.kind == TransferKind::Offload || r.kind == TransferKind::Readback;
      if (dir != (toHost ? "d2h" : "h2d")) {
        rows.bad(3, "is " + quoteBounded(dir) + ", but " +
                        (r.kind == TransferKind::Offload ? "an " : "a ") +
                        std::string(transferKindName(r.kind)) + " goes " +
                        (toHost ? "d2h" : "h2d"));
      }
      r.to_host = toHost;
      r.tensor = rows.int32(4);
      if (r.tensor >= tensorCount) {
        rows.bad(
            4, "is " + std::to_string(r.tensor) + ", but table 'tensors' has " +
                   (tensorCount ? "tensors 0.." + std::to_string(tensorCount - 1) : "no tensors"));
      }
      r.step = rows.int32(5, 0, updateStep);
      r.bytes = rows.nonNegative(6);
      r.start_ns = rows.nonNegative(7);
      r.end_ns = rows.integer(8, r.start_ns);
      r.pinned = rows.flag(9);
      r.overlap_ns = rows.integer(10, 0, r.end_ns - r.start_ns);
      d.transfers.push_back(r);
    }
  }
  {
    TableRows rows(*m_db, "memory", {"k", "iteration", "time_ns", "in_use"},
                   "k, iteration, time_ns, rowid");
    while (rows.next()) {
      MemoryRow r{rows.integer(0, 1, kMaxRecordedK), rows.int32(1), rows.nonNegative(2),
                  rows.nonNegative(3)};
      requireIteration(rows, r.k, r.iteration);
      d.memory.push_back(r);
    }
  }
  {
    TableRows rows(*m_db, "fits",
                   {"id", "scope", "target", "direction", "form", "params", "points", "rmse",
                    "max_rel_error", "chosen"},
                   "id");
    while (rows.next()) {
      d.fits.push_back({rows.integer(0), rows.text(1), rows.text(2), rows.text(3), rows.text(4),
                        rows.jsonText(5), rows.int32(6), rows.real(7, true), rows.real(8, true),
                        rows.flag(9)});
    }
  }
  {
    TableRows rows(
        *m_db, "plans",
        {"id", "created_utc", "policy", "mode", "budget", "k", "predicted_iter_ns", "json"}, "id");
    while (rows.next()) {
      d.plans.push_back({rows.integer(0), rows.text(1), rows.text(2), rows.text(3),
                         rows.nonNegative(4), rows.integer(5, 1), rows.nonNegative(6),
                         rows.jsonText(7)});
      // A recorded plan is read as a plan file is: compare and the app take its predictions.
      try {
        planFromJson(json::parse(d.plans.back().json), "plan");
      } catch (const Error& e) {
        damaged(path(), "table 'plans' row " + std::to_string(d.plans.back().id) + ": " + e.what());
      }
    }
  }
  return d;
}

// ---------------------------------------------------------------------------------------------
// Live writers

std::optional<LiveWriter> liveWriter(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  try {
    Database db(path, Database::Mode::ReadOnly);
    if (db.queryInt("PRAGMA application_id") != kApplicationId) return std::nullopt;
    std::map<std::string, std::string> kv;
    Statement st(db,
                 "SELECT key, value FROM meta WHERE key IN ('status', 'writer_pid', "
                 "'writer_host', 'writer_start', 'kind', 'started_utc')");
    while (st.step())
      kv[st.text(0)] = st.text(1);
    if (kv["status"] != runStatusName(RunStatus::Running)) return std::nullopt;
    LiveWriter w;
    try {
      w.pid = std::stoll(kv["writer_pid"]);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    w.host = kv["writer_host"];
    if (!writerAlive(w.pid, w.host, kv["writer_start"])) return std::nullopt;
    w.kind = kv["kind"];
    w.started = processStartUtc(w.pid);
    if (w.started.empty()) w.started = kv["started_utc"];
    return w;
  } catch (const Error&) {  // not a readable run database: nobody is writing it
    return std::nullopt;
  }
}

void requireNetwork(const std::string& path, const NetworkInfo& network, const std::string& what) {
  if (network.json.empty())
    throwBadInput(path + ": the run ended before its network was recorded; nothing to " + what);
}

void refuseIfLiveWriter(const std::string& path) {
  if (const auto w = liveWriter(path)) {
    throwBadInput("'" + path + "' is still being written by a running " +
                  (w->kind.empty() ? std::string("process") : "swapscope " + w->kind) + " (pid " +
                  std::to_string(w->pid) + " on " + w->host + ", started " + w->started +
                  "); it is not replaced while that process runs: stop it or choose another file");
  }
}

}  // namespace swapscope::store
