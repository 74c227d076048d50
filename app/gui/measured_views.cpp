// SPDX-License-Identifier: MIT
#include "gui/measured_views.h"

#include <QFileInfo>
#include <QMessageBox>
#include <QThreadPool>
#include <QWidget>
#include <filesystem>
#include <utility>

#include "common/error.h"
#include "gui/off_thread.h"
#include "options/file_options.h"
#include "store/chrome_trace.h"
#include "views/compare_data.h"
#include "views/compare_view.h"
#include "views/timeline_view.h"

namespace swapscope::gui {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

}  // namespace

MeasuredViews::MeasuredViews(QWidget* dialogParent, std::shared_ptr<InputFiles> inputs)
    : QObject(dialogParent),
      m_parent(dialogParent),
      m_inputs(std::move(inputs)),
      m_pool(new QThreadPool(this)),
      m_timeline(new TimelineView),
      m_compare(new CompareView) {
  m_pool->setMaxThreadCount(1);  // reads in the order asked, and one comparison at a time
  connect(m_timeline, &TimelineView::failed, this,
          [this](const QString& m) { emit failed("Cannot show the iteration", m); });
  connect(m_timeline, &TimelineView::perfettoRequested, this, &MeasuredViews::openInPerfetto);
  connect(m_compare, &CompareView::pairChosen, this, [this](int a, int b) {
    m_pairA = a;
    m_pairB = b;
    requestCompare();
  });
}

MeasuredViews::~MeasuredViews() {
  m_pool->waitForDone();
}

std::vector<std::shared_ptr<const store::RunData>> MeasuredViews::runs() const {
  std::vector<std::shared_ptr<const store::RunData>> all;
  if (m_primary) all.push_back(m_primary);
  all.insert(all.end(), m_added.begin(), m_added.end());
  return all;
}

void MeasuredViews::setPrimary(std::shared_ptr<const store::RunData> run) {
  m_primary = std::move(run);
  if (!m_primary) {
    runsChanged();
    return;
  }
  // A newly opened planning database is shown, at --k when given, else at its largest k.
  runsChanged(true, std::exchange(m_pendingK, std::nullopt));
}

void MeasuredViews::addDatabase(const QString& path) {
  m_inputs->addDatabase(path, "the run database open for comparison");
  ++m_reading;
  emit status(tr("reading %1").arg(path));
  runOffGuiThread(
      m_pool, this, [file = path.toStdString()] { return store::RunReader(file).load(); },
      [](MeasuredViews& self, std::shared_ptr<const store::RunData> run, const QString& error) {
        --self.m_reading;
        if (run) {
          self.m_added.push_back(std::move(run));
          // The database just added is compared with the planning one.
          self.m_pairA = 0;
          self.m_pairB = static_cast<int>(self.runs().size()) - 1;
          self.runsChanged();
          emit self.status({});
        } else {
          emit self.failed("Cannot open the run database for comparison", error);
        }
        self.checkIdle();
      });
}

void MeasuredViews::runsChanged(bool showPrimary, std::optional<std::int64_t> k) {
  const auto all = runs();
  QString timelineError;
  try {
    m_timeline->setRuns(all, showPrimary, k);
  } catch (const Error& e) {
    timelineError = qs(e.what());
  }
  QStringList names;
  for (std::size_t i = 0; i < all.size(); ++i) {
    names << QStringLiteral("%1%2 (%3)")
                 .arg(i == 0 && m_primary ? "planning: " : "")
                 .arg(qs(all[i]->network.name),
                      qs(std::filesystem::path(all[i]->path).filename().string()));
  }
  const int n = static_cast<int>(all.size());
  // A database added before the planning one was read is still compared with it.
  if (m_pairA >= n) m_pairA = 0;
  if (m_pairB >= n || m_pairB == m_pairA) m_pairB = n > 1 ? (m_pairA == n - 1 ? 0 : n - 1) : 0;
  m_compare->setRunNames(names, m_pairA, m_pairB);
  requestCompare();
  if (!timelineError.isEmpty()) emit failed("Cannot show the iteration", timelineError);
}

void MeasuredViews::requestCompare() {
  const auto all = runs();
  const int n = static_cast<int>(all.size());
  const quint64 generation = ++m_compareGeneration;
  if (n < 2) {
    m_comparing = false;
    m_compare->setMessage(
        n == 0 ? "Open a run database, then add another (File > Add database for comparison...)."
               : "Add a database to compare with (File > Add database for comparison...).");
    checkIdle();
    return;
  }
  if (m_pairA < 0 || m_pairB < 0 || m_pairA >= n || m_pairB >= n || m_pairA == m_pairB) {
    // A comparison still running is stale now (the generation moved on): nothing is pending.
    m_comparing = false;
    if (m_pairA == m_pairB) m_compare->setMessage("Pick two different run databases to compare.");
    checkIdle();
    return;
  }
  m_comparing = true;
  emit status("comparing the run databases");
  const auto a = all[static_cast<std::size_t>(m_pairA)];
  const auto b = all[static_cast<std::size_t>(m_pairB)];
  runOffGuiThread(
      m_pool, this, [a, b] { return makeCompareData(*a, *b); },
      [generation](MeasuredViews& self, std::shared_ptr<const CompareData> data,
                   const QString& error) {
        if (generation != self.m_compareGeneration) return;  // a newer pair
        self.m_comparing = false;
        if (data) {
          self.m_compare->setData(*data);
          emit self.status({});
        } else {
          self.m_compare->setMessage(error);
          emit self.failed("Cannot compare the run databases", error);
        }
        self.checkIdle();
      });
}

void MeasuredViews::checkIdle() {
  if (!busy()) emit idle();
}

QString MeasuredViews::tracePath() const {
  const TimelineData& d = m_timeline->data();
  if (d.path.empty()) return {};
  const std::filesystem::path db(d.path);
  const std::string name = db.stem().string() + "-k" + std::to_string(d.k) + "-it" +
                           std::to_string(d.iteration) + ".trace.json";
  return qs((db.parent_path() / name).string());
}

std::function<std::string()> MeasuredViews::traceWriter(const QString& path, bool force) const {
  const TimelineData& d = m_timeline->data();
  const auto open = runs();
  std::shared_ptr<const store::RunData> run;
  files::OutputRules rules = m_inputs->rules(force);
  for (const auto& r : open) {
    if (r.get() == m_timeline->run()) run = r;
    cli::addInput(rules, "the run database", r->path);
  }
  if (!run || d.path.empty()) throwBadInput("no recorded iteration is shown");
  return [run, k = d.k, iteration = d.iteration, rules, out = path.toStdString()] {
    files::checkOutputPath(out, "the trace file", rules);
    const auto trace = store::chromeTrace(*run, k, iteration);
    files::writeOutputFile(
        out, "the trace file",
        trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + '\n', rules);
    return out;
  };
}

void MeasuredViews::writeTrace(const QString& path, bool force) {
  traceWriter(path, force)();
}

void MeasuredViews::openInPerfetto() {
  const QString path = tracePath();
  if (path.isEmpty()) return;
  bool force = false;
  if (!m_headless && QFileInfo::exists(path)) {
    if (QMessageBox::question(m_parent, "Open in Perfetto", path + " exists. Replace it?") !=
        QMessageBox::Yes)
      return;
    force = true;
  }
  std::function<std::string()> write;
  try {
    write = traceWriter(path, force);
  } catch (const Error& e) {
    emit status(tr("cannot write the trace: %1").arg(qs(e.what())));
    emit failed("Cannot write the trace", qs(e.what()));
    return;
  }
  ++m_writing;
  emit status(tr("writing %1").arg(path));
  runOffGuiThread(
      m_pool, this, std::move(write),
      [](MeasuredViews& self, std::shared_ptr<const std::string> written, const QString& error) {
        --self.m_writing;
        if (written) {
          emit self.status(
              tr("%1 written: open it in ui.perfetto.dev (Open trace file)").arg(qs(*written)));
        } else {
          emit self.status(tr("cannot write the trace: %1").arg(error));
          emit self.failed("Cannot write the trace", error);
        }
        self.checkIdle();
      });
}

}  // namespace swapscope::gui
