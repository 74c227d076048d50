// SPDX-License-Identifier: MIT
#include "gui/run_document.h"

#include <QThreadPool>

#include "common/error.h"
#include "graph/network_json.h"
#include "gui/off_thread.h"
#include "perfmodel/stability.h"

namespace swapscope::gui {

RunDocument::RunDocument(QObject* parent) : QObject(parent), m_pool(new QThreadPool(this)) {
  qRegisterMetaType<LoadedRun>();
  m_pool->setMaxThreadCount(1);
}

RunDocument::~RunDocument() {
  m_pool->waitForDone();
}

LoadedRun RunDocument::read(const std::string& path) {
  store::RunReader reader(path);
  auto rows = std::make_shared<store::RunData>(reader.load());
  store::requireNetwork(path, rows->network, "plan");
  LoadedRun d;
  d.path = path;
  d.network =
      std::make_shared<const Network>(networkFromText(rows->network.json, path + " (network)"));
  d.model = std::make_shared<const perf::PerfModel>(perf::PerfModel::fit(*rows));
  d.model_view = std::make_shared<const ModelData>(makeModelData(*rows, *d.model));
  if (const auto stability = perf::readStability(*rows))
    d.profile_warning = perf::stabilityWarning(*stability);
  d.unfinished_warning = perf::unfinishedProfileWarning(rows->meta);
  d.not_profile_warning = perf::notAProfileWarning(*rows);
  d.rows = std::move(rows);
  return d;
}

void RunDocument::open(const QString& path) {
  const quint64 generation = ++m_generation;
  runOffGuiThread(
      m_pool, this, [file = path.toStdString()] { return read(file); },
      [generation](RunDocument& self, std::shared_ptr<const LoadedRun> data, const QString& error) {
        if (generation != self.m_generation) return;  // a newer open() won
        if (!data) {
          emit self.loadFailed(error);
          return;
        }
        self.m_current = std::move(data);
        emit self.loaded(*self.m_current);
      });
}

}  // namespace swapscope::gui
