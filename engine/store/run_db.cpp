// SPDX-License-Identifier: MIT
#include "store/run_db.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "graph/network_json.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace swapscope::store {
namespace fs = std::filesystem;
using json = nlohmann::json;

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

[[noreturn]] void damaged(const std::string& path, const std::string& why) {
  throwBadInput("'" + path + "' is damaged: " + why);
}

RunStatus statusFromName(const std::string& path, const std::string& s) {
  for (RunStatus v :
       {RunStatus::Running, RunStatus::Complete, RunStatus::Incomplete, RunStatus::Failed}) {
    if (s == runStatusName(v)) return v;
  }
  damaged(path, "meta 'status' is '" + s + "', not running, complete, incomplete or failed");
}

Direction directionFromName(const std::string& path, const std::string& s) {
  for (Direction v : {Direction::Forward, Direction::Backward, Direction::Update}) {
    if (s == directionName(v)) return v;
  }
  damaged(path, "unknown direction '" + s + "'");
}

TransferKind transferKindFromName(const std::string& path, const std::string& s) {
  for (TransferKind v : {TransferKind::Offload, TransferKind::Prefetch, TransferKind::Load,
                         TransferKind::Readback}) {
    if (s == transferKindName(v)) return v;
  }
  damaged(path, "unknown transfer kind '" + s + "'");
}

std::string hostName() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "";
  return buf.data();
}

bool processAlive(std::int64_t pid) {
  if (pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

template <typename T>
std::string jsonArray(const std::vector<T>& v) {
  return json(v).dump();
}

template <typename T>
std::vector<T> parseArray(const std::string& path, const std::string& text, const char* what) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array()) damaged(path, std::string(what) + " is not a JSON array");
  try {
    return j.get<std::vector<T>>();
  } catch (const json::exception&) {
    damaged(path, std::string(what) + " holds a value of the wrong type");
  }
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
               "time_ns, stall_ns) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)"),
        transfer(
            db,
            "INSERT INTO transfers(k, iteration, kind, direction, tensor, step, bytes, "
            "start_ns, end_ns, pinned, overlap_ns) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"),
        memory(db, "INSERT INTO memory(k, iteration, time_ns, in_use) VALUES (?1,?2,?3,?4)") {}
  Statement meta, iteration, sample, transfer, memory;

  void insert(const SampleRow& r) {
    sample.bind(1, r.k).bind(2, r.iteration).bind(3, r.step).bind(4, r.layer);
    sample.bind(5, directionName(r.direction)).bind(6, r.flops).bind(7, r.start_ns);
    sample.bind(8, r.time_ns).bind(9, r.stall_ns).run();
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

RunWriter::RunWriter(const std::string& path, const RunMeta& meta, bool overwrite) {
  std::error_code ec;
  if (fs::exists(path, ec)) {
    if (!overwrite) {
      throwBadInput("'" + path +
                    "' already exists; a run database is only replaced when asked (--force)");
    }
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      fs::remove(path + suffix, ec);
  }
  m_db = std::make_unique<Database>(path, Database::Mode::Create);
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
    };
    for (const auto& [key, value] : rows)
      m_st->meta.bind(1, key).bind(2, value).run();
    for (const auto& [key, value] : meta.extra)
      m_st->meta.bind(1, key).bind(2, value).run();
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
    throw Error(ErrorKind::Runtime, "'" + m_db->path() + "': written to after the run finished");
  }
}

const std::string& RunWriter::path() const {
  return m_db->path();
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
               "reuse_delay, hoisted_prefetches) VALUES (?1,?2,?3,?4,?5,?6,?7)");
  st.bind(1, b.k).bind(2, b.policy).bind(3, b.warmup).bind(4, b.predicted_peak);
  st.bind(5, b.measured_peak).bind(6, b.reuse_delay).bind(7, b.hoisted_prefetches).run();
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
  m_db->exec("PRAGMA journal_mode = DELETE");
}

// ---------------------------------------------------------------------------------------------
// Reader

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
    std::array<char, 16> header{};
    std::ifstream in(path, std::ios::binary);
    in.read(header.data(), header.size());
    static constexpr char kMagic[16] = "SQLite format 3";  // with its terminating NUL
    if (in.gcount() < 16 || !std::equal(header.begin(), header.end(), kMagic)) {
      throwBadInput("'" + path +
                    "' is not a Swapscope run database: it is not an SQLite file (no SQLite "
                    "header)");
    }
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
    if (check.step() && check.text(0) != "ok") damaged(path, check.text(0));
  }
}

RunReader::~RunReader() = default;

const std::string& RunReader::path() const {
  return m_db->path();
}

RunMeta RunReader::meta() {
  RunMeta m;
  Statement st(*m_db, "SELECT key, value FROM meta");
  std::map<std::string, std::string> kv;
  while (st.step())
    kv[st.text(0)] = st.text(1);
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
      if (used == v.size()) return static_cast<std::int64_t>(n);
    } catch (const std::exception&) {
    }
    damaged(path(), std::string("meta '") + key + "' is '" + v + "', not an integer");
  };
  m.kind = take("kind");
  m.backend = take("backend");
  m.device = take("device");
  m.device_memory = takeInt("device_memory");
  {
    const json v = json::parse(take("versions"), nullptr, false);
    if (v.is_discarded() || !v.is_object()) damaged(path(), "meta 'versions' is not a JSON object");
    for (const auto& [name, value] : v.items()) {
      m.versions[name] = value.is_string() ? value.get<std::string>() : value.dump();
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
  m.extra = std::move(kv);
  if (m.status == RunStatus::Running &&
      !(m.writer_host == hostName() && processAlive(m.writer_pid))) {
    m.status = RunStatus::Incomplete;
    m.status_message = "the writing process (pid " + std::to_string(m.writer_pid) + " on " +
                       m.writer_host + ") ended without finishing the run";
  }
  return m;
}

NetworkInfo RunReader::network() {
  Statement st(*m_db, "SELECT name, structure_hash, json FROM network WHERE id = 1");
  NetworkInfo n;
  if (st.step()) n = {st.text(0), st.text(1), st.text(2)};
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
  return c;
}

RunData RunReader::load() {
  RunData d;
  d.path = path();
  d.meta = meta();
  d.network = network();
  const std::string& p = d.path;
  {
    Statement st(*m_db,
                 "SELECT id, name, kind, inputs, out_shape, params, fwd_flops, bwd_data_flops, "
                 "bwd_weight_flops, fm_fixed, fm_per_sample FROM layers ORDER BY id");
    while (st.step()) {
      LayerRow r;
      r.id = static_cast<int>(st.integer(0));
      r.name = st.text(1);
      r.kind = st.text(2);
      r.inputs = parseArray<int>(p, st.text(3), "layers.inputs");
      r.out_shape = parseArray<std::int64_t>(p, st.text(4), "layers.out_shape");
      r.params = st.integer(5);
      r.fwd_flops = st.integer(6);
      r.bwd_data_flops = st.integer(7);
      r.bwd_weight_flops = st.integer(8);
      r.fm = {st.integer(9), st.integer(10)};
      d.layers.push_back(std::move(r));
    }
  }
  {
    Statement st(*m_db, "SELECT step, layer, direction, flops_per_sample FROM steps ORDER BY step");
    while (st.step()) {
      d.steps.push_back({static_cast<int>(st.integer(0)), static_cast<int>(st.integer(1)),
                         directionFromName(p, st.text(2)), st.integer(3)});
    }
  }
  {
    Statement st(*m_db,
                 "SELECT id, name, kind, layer, size_fixed, size_per_sample FROM tensors "
                 "ORDER BY id");
    while (st.step()) {
      d.tensors.push_back({static_cast<int>(st.integer(0)),
                           st.text(1),
                           st.text(2),
                           static_cast<int>(st.integer(3)),
                           {st.integer(4), st.integer(5)}});
    }
  }
  {
    Statement st(*m_db,
                 "SELECT k, policy, warmup, predicted_peak, measured_peak, reuse_delay, "
                 "hoisted_prefetches FROM batches ORDER BY k");
    while (st.step()) {
      d.batches.push_back({st.integer(0), st.text(1), static_cast<int>(st.integer(2)),
                           st.integer(3), st.integer(4), static_cast<int>(st.integer(5)),
                           static_cast<int>(st.integer(6))});
    }
  }
  {
    Statement st(*m_db,
                 "SELECT k, iteration, start_ns, duration_ns, loss, stall_ns, offload_bytes, "
                 "prefetch_bytes, load_bytes FROM iterations ORDER BY k, iteration");
    while (st.step()) {
      d.iterations.push_back({st.integer(0), static_cast<int>(st.integer(1)), st.integer(2),
                              st.integer(3), st.real(4), st.integer(5), st.integer(6),
                              st.integer(7), st.integer(8)});
    }
  }
  {
    Statement st(*m_db,
                 "SELECT k, iteration, step, layer, direction, flops, start_ns, time_ns, stall_ns "
                 "FROM samples ORDER BY k, iteration, start_ns, step, layer");
    while (st.step()) {
      d.samples.push_back({st.integer(0), static_cast<int>(st.integer(1)),
                           static_cast<int>(st.integer(2)), static_cast<int>(st.integer(3)),
                           directionFromName(p, st.text(4)), st.integer(5), st.integer(6),
                           st.integer(7), st.integer(8)});
    }
  }
  {
    Statement st(*m_db,
                 "SELECT k, iteration, kind, direction, tensor, step, bytes, start_ns, end_ns, "
                 "pinned, overlap_ns FROM transfers ORDER BY k, iteration, start_ns, rowid");
    while (st.step()) {
      TransferRow r;
      r.k = st.integer(0);
      r.iteration = static_cast<int>(st.integer(1));
      r.kind = transferKindFromName(p, st.text(2));
      r.to_host = st.text(3) == "d2h";
      r.tensor = static_cast<int>(st.integer(4));
      r.step = static_cast<int>(st.integer(5));
      r.bytes = st.integer(6);
      r.start_ns = st.integer(7);
      r.end_ns = st.integer(8);
      r.pinned = st.integer(9) != 0;
      r.overlap_ns = st.integer(10);
      d.transfers.push_back(r);
    }
  }
  {
    Statement st(*m_db,
                 "SELECT k, iteration, time_ns, in_use FROM memory ORDER BY k, iteration, "
                 "time_ns, rowid");
    while (st.step()) {
      d.memory.push_back(
          {st.integer(0), static_cast<int>(st.integer(1)), st.integer(2), st.integer(3)});
    }
  }
  {
    Statement st(*m_db,
                 "SELECT id, scope, target, direction, form, params, points, rmse, max_rel_error, "
                 "chosen FROM fits ORDER BY id");
    while (st.step()) {
      d.fits.push_back({st.integer(0), st.text(1), st.text(2), st.text(3), st.text(4), st.text(5),
                        static_cast<int>(st.integer(6)), st.real(7), st.real(8),
                        st.integer(9) != 0});
    }
  }
  {
    Statement st(*m_db,
                 "SELECT id, created_utc, policy, mode, budget, k, predicted_iter_ns, json FROM "
                 "plans ORDER BY id");
    while (st.step()) {
      d.plans.push_back({st.integer(0), st.text(1), st.text(2), st.text(3), st.integer(4),
                         st.integer(5), st.integer(6), st.text(7)});
    }
  }
  return d;
}

}  // namespace swapscope::store
