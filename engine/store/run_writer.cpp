// SPDX-License-Identifier: MIT
/// @brief RunWriter: creates a run database and records a run into it.
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/files.h"
#include "graph/network_json.h"
#include "store/process_identity.h"
#include "store/replace.h"
#include "store/run_db.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace swapscope::store {
namespace fs = std::filesystem;
using json = nlohmann::json;

/// How long finish() waits for other connections to close before it keeps WAL mode.
constexpr int kFinishWaitMs = 1000;

namespace {

template <typename T>
std::string jsonArray(const std::vector<T>& v) {
  return json(v).dump();
}

}  // namespace

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

namespace {

/// Error(BadInput) where SQLite's side files of the database `name` (its -journal, the longest)
/// could not be created: a file name holds 255 bytes. `role` says whose name it is.
void refuseNameWithoutRoomForSideFiles(const std::string& name, const std::string& role) {
  constexpr std::size_t kNameMax = 255, kLongestSuffix = 8;  // "-journal"
  const std::size_t bytes = fs::path(name).filename().string().size();
  if (bytes + kLongestSuffix <= kNameMax) return;
  throwBadInput("'" + name + "'" + role + ": its file name is " + std::to_string(bytes) +
                " bytes long, and SQLite's side files beside it (-journal, -wal) need " +
                std::to_string(kLongestSuffix) + " bytes more than a file name holds (" +
                std::to_string(kNameMax) + "); choose a shorter name");
}

}  // namespace

RunWriter::RunWriter(const std::string& path, const RunMeta& meta, bool overwrite)
    : m_path(path), m_target(path) {
  refuseNameWithoutRoomForSideFiles(path, "");
  std::error_code ec;
  const bool created = !fs::exists(path, ec);
  // A symbolic link to a missing file names no database: `overwrite` replaces the link itself
  // (as every output does), never the missing file it points to.
  m_replacesLink = created && fs::is_symlink(fs::symlink_status(path, ec));
  if (m_replacesLink && !overwrite) {
    throwBadInput("'" + path +
                  "' exists as a symbolic link to a missing file; a run database is only "
                  "created over it when asked (--force)");
  }
  if (!created) {
    if (!overwrite) {
      throwBadInput("'" + path +
                    "' already exists; a run database is only replaced when asked (--force)");
    }
    refuseIfLiveWriter(path);
    // The earlier file stays as it is until a complete run replaces it (finish()).
    m_path = claimRecordingName(path, &m_earlierRecordings);
    m_replacing = true;
    m_targetId = files::identity(path);
  }
  if (created) {
    // The file appears whole: its schema, application id and meta are written under a name of
    // its own beside it and linked into place, so that a kill at any moment leaves no file or
    // one that reads (a file created in place could be caught empty or without its id).
    m_path = claimCreatingName(path);
  }
  try {
    if (m_replacing) {
      refuseNameWithoutRoomForSideFiles(
          m_path, " (the recording that replaces '" + path + "' once the run completes)");
    }
    create(meta);
    if (created) linkIntoPlace(path);
  } catch (...) {
    m_st.reset();
    m_db.reset();
    if (m_replacing || created) {  // nothing was recorded: the claimed name goes
      for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        fs::remove(m_path + suffix, ec);
    }
    throw;
  }
}

namespace {

constexpr std::string_view kCreatingPrefix = ".swapscope-creating-";

/// Removes the files a creation killed before it moved its database into place left in `dir`:
/// `.swapscope-creating-PID-N` (and SQLite's side files of it) where no process PID runs on
/// this host and the file was last written a minute ago or more. A creation takes milliseconds;
/// the age keeps a folder shared with another host from losing a file being created there.
void removeStaleCreatingFiles(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec);
  if (ec) return;
  const auto now = fs::file_time_type::clock::now();
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return;
    const std::string name = it->path().filename().string();
    if (name.compare(0, kCreatingPrefix.size(), kCreatingPrefix) != 0) continue;
    // PID-N, where N names the attempt: the main file only (its side files go with it).
    const std::string rest = name.substr(kCreatingPrefix.size());
    const std::size_t dash = rest.find('-');
    const auto number = [](std::string_view digits) {
      return !digits.empty() && digits.size() <= 9 &&
             digits.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (dash == std::string::npos || !number(std::string_view(rest).substr(0, dash)) ||
        !number(std::string_view(rest).substr(dash + 1))) {
      continue;
    }
    const long pid = std::stol(rest.substr(0, dash));
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code timeEc;
    const auto written = fs::last_write_time(it->path(), timeEc);
    if (timeEc || now - written < std::chrono::minutes(1)) continue;
    for (const char* suffix : {"-wal", "-shm", "-journal", ""})
      fs::remove(it->path().string() + suffix, timeEc);
  }
}

}  // namespace

std::string RunWriter::claimCreatingName(const std::string& target) {
  const fs::path dir = fs::path(target).parent_path();
  removeStaleCreatingFiles(dir);
  for (int attempt = 0;; ++attempt) {
    const std::string name = (dir / (std::string(kCreatingPrefix) + std::to_string(getpid()) + "-" +
                                     std::to_string(attempt)))
                                 .string();
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);  // SQLite makes an empty file a database
      return name;
    }
    const int err = errno;
    if (err == EEXIST && attempt < 1000) continue;
    std::error_code noDir;
    const std::string why = err == ENOENT && !dir.empty() && !fs::is_directory(dir, noDir)
                                ? "the directory '" + dir.string() + "' does not exist"
                                : files::errnoText(err);
    throw Error(err == EACCES || err == EROFS || err == ENOENT || err == ENOTDIR
                    ? ErrorKind::BadInput
                    : ErrorKind::Runtime,
                "cannot create '" + target + "': " + why);
  }
}

void RunWriter::linkIntoPlace(const std::string& target) {
  // Closed first: the last connection folds the -wal into the file and removes it.
  m_st.reset();
  m_db.reset();
  // Over the dangling link it was asked to replace, after a last look that it still is one.
  std::error_code ec;
  const bool overLink =
      m_replacesLink && fs::is_symlink(fs::symlink_status(target, ec)) && !fs::exists(target, ec);
  const int err = overLink ? (::rename(m_path.c_str(), target.c_str()) == 0 ? 0 : errno)
                           : files::renameWithoutReplacing(m_path, target);
  if (err != 0) {
    if (err == EEXIST) {
      throwBadInput("'" + target +
                    "' appeared while the run was starting; a run database is only replaced "
                    "when asked (--force)");
    }
    throw Error(ErrorKind::Runtime, "cannot create '" + target + "': " + files::errnoText(err));
  }
  m_path = target;
  files::syncFolderOf(m_path);  // the name is durable before any iteration is recorded under it
  m_db = std::make_unique<Database>(m_path, Database::Mode::ReadWrite);
  m_db->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
  m_st = std::make_unique<Statements>(*m_db);
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
  std::string note = "recording into '" + m_path + "'; it replaces '" + m_target +
                     "' once the run completes (until then, or if it does not complete, '" +
                     m_target + "' keeps the earlier run)";
  if (m_earlierRecordings.empty()) return note;
  // Each holds a run of its own (killed, interrupted or failed): never removed here, but said,
  // so that they do not pile up unnoticed.
  constexpr std::size_t kNamed = 3;
  const std::size_t n = m_earlierRecordings.size();
  note += "; ";
  for (std::size_t i = 0; i < std::min(n, kNamed); ++i) {
    if (i > 0) note += i + 1 == std::min(n, kNamed) && n <= kNamed ? " and " : ", ";
    note += "'" + m_earlierRecordings[i] + "'";
  }
  if (n > kNamed) note += " and " + std::to_string(n - kNamed) + " more";
  note += n == 1 ? " holds a run" : " hold runs";
  note += " recorded earlier that did not replace it; remove ";
  note += n == 1 ? "it" : "them";
  note += " once no longer needed";
  return note;
}

std::string RunWriter::keptNote() const {
  // Also where finish() itself failed (a full disk): the earlier file was never touched.
  if (!m_replacing || m_replaced) return "";
  const std::string holds =
      m_targetTaken ? "' holds another file now" : "' still holds the earlier run";
  return "'" + m_target + holds + "; this run is in '" + m_path + "'" +
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
  st.bind(1, fitScopeName(f.scope)).bind(2, f.target).bind(3, fitDirectionName(f.direction));
  st.bind(4, fitRowFormName(f.form)).bind(5, f.params);
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
  // Another file moved over the earlier one while this run was recorded (another run that
  // replaced it, with --force, and finished first): replacing it would lose that run.
  if (const auto now = files::identity(m_target); m_targetId && now && *now != *m_targetId) {
    m_keptWhy =
        "another file took its name while this run was recorded (another run that replaced it "
        "with --force, most likely); moving this run over it would lose that one";
    m_targetTaken = true;
    return;
  }
  m_keptWhy = replaceWithRecording(m_path, m_target);
  if (!m_keptWhy.empty()) return;
  m_replaced = true;
  m_path = m_target;
}

}  // namespace swapscope::store
