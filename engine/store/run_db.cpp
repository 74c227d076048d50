// SPDX-License-Identifier: MIT
/// @brief The run database's names of its enumerations, the live-writer checks, and the rule that
/// a budget above the profiled device's memory is warned of.
#include "store/run_db.h"

#include <filesystem>
#include <map>

#include "common/error.h"
#include "common/name_table.h"
#include "store/process_identity.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace swapscope::store {
namespace fs = std::filesystem;

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

std::string budgetAboveDeviceWarning(std::int64_t budget, std::int64_t device_memory) {
  if (device_memory <= 0 || budget <= device_memory) return "";
  // Where both print alike (23.55 GiB and 23.5 GiB as "23.5 GiB"), in bytes.
  const std::string device = formatBytes(device_memory);
  const std::string exact =
      formatBytes(budget) == device
          ? " (" + std::to_string(budget) + " bytes against " + std::to_string(device_memory) + ")"
          : "";
  return "the budget is above the " + device + " the profiled device has" + exact +
         ": a plan for it cannot run there";
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

constexpr NamedValue<FitScope> kFitScopes[] = {{FitScope::Type, "type"},
                                               {FitScope::Layer, "layer"},
                                               {FitScope::Pcie, "pcie"},
                                               {FitScope::Dispatch, "dispatch"},
                                               {FitScope::Contention, "contention"}};
constexpr NamedValue<FitDirection> kFitDirections[] = {
    {FitDirection::Forward, "fwd"},      {FitDirection::Backward, "bwd"},
    {FitDirection::Update, "update"},    {FitDirection::HostToDevice, "h2d"},
    {FitDirection::DeviceToHost, "d2h"}, {FitDirection::None, "-"}};
constexpr NamedValue<FitRowForm> kFitRowForms[] = {
    {FitRowForm::Affine, "affine"},
    {FitRowForm::Saturating, "saturating"},
    {FitRowForm::LogLog, "loglog"},
    {FitRowForm::MeanOfStepMedians, "mean-of-step-medians"},
    {FitRowForm::Proportional, "proportional"},
    {FitRowForm::Line, "line"},
    {FitRowForm::Mean, "mean"},
    {FitRowForm::Median, "median"}};

}  // namespace

std::string_view fitScopeName(FitScope s) {
  return nameIn(kFitScopes, s);
}
std::optional<FitScope> fitScopeFromName(std::string_view name) {
  return valueIn(kFitScopes, name);
}
std::string_view fitDirectionName(FitDirection d) {
  return nameIn(kFitDirections, d);
}
std::optional<FitDirection> fitDirectionFromName(std::string_view name) {
  return valueIn(kFitDirections, name);
}
std::string_view fitRowFormName(FitRowForm f) {
  return nameIn(kFitRowForms, f);
}
std::optional<FitRowForm> fitRowFormFromName(std::string_view name) {
  return valueIn(kFitRowForms, name);
}

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
