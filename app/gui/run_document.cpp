// SPDX-License-Identifier: MIT
#include "gui/run_document.h"

#include <QPointer>
#include <QThreadPool>

#include "common/error.h"
#include "graph/network_json.h"

namespace swapscope::gui {

RunDocument::RunDocument(QObject* parent) : QObject(parent), m_pool(new QThreadPool(this)) {
  qRegisterMetaType<RunData>();
  m_pool->setMaxThreadCount(1);
}

RunDocument::~RunDocument() {
  m_pool->waitForDone();
}

RunData RunDocument::read(const std::string& path) {
  store::RunReader reader(path);
  auto run = std::make_shared<store::RunData>(reader.load());
  if (run->network.json.empty())
    throwBadInput(path + ": the run ended before its network was recorded; nothing to plan");
  RunData d;
  d.path = path;
  d.network =
      std::make_shared<const Network>(networkFromText(run->network.json, path + " (network)"));
  d.model = std::make_shared<const perf::PerfModel>(perf::PerfModel::fit(*run));
  d.model_view = std::make_shared<const ModelData>(makeModelData(*run, *d.model));
  d.run = std::move(run);
  return d;
}

void RunDocument::open(const QString& path) {
  const quint64 generation = ++m_generation;
  emit progress(tr("reading %1").arg(path));
  const std::string file = path.toStdString();
  QPointer<RunDocument> self(this);
  m_pool->start([self, generation, file] {
    std::shared_ptr<RunData> data;
    QString error;
    try {
      data = std::make_shared<RunData>(read(file));
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    if (!self) return;
    QMetaObject::invokeMethod(
        self.data(),
        [self, generation, data, error] {
          if (!self || generation != self->m_generation) return;  // a newer open() won
          if (!data) {
            emit self->loadFailed(error);
            return;
          }
          self->m_current = data;
          emit self->loaded(*data);
        },
        Qt::QueuedConnection);
  });
}

}  // namespace swapscope::gui
