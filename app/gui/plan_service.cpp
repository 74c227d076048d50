// SPDX-License-Identifier: MIT
#include "gui/plan_service.h"

#include <QPointer>
#include <QThread>
#include <QThreadPool>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "analysis/gmap.h"
#include "analysis/memory.h"
#include "analysis/swap_policy.h"
#include "collectors/profiler.h"
#include "common/error.h"
#include "gui/view_registry.h"

namespace swapscope::gui {
namespace {

/// The most lanes a sweep plans on: the speed of more was never measured, and each lane polls
/// while the user's plan runs.
constexpr int kMaxSweepLanes = 8;

/// On Linux, lowers the calling thread's priority (nice 10) below the GUI thread's and the
/// requested plan's, once per thread, so that the sweep's lanes weigh about a tenth of either
/// for the scheduler (two lanes on two cores at the GUI thread's priority made its longest block
/// longer). The lanes are perf::sweep's own threads, not QThreads, whose priority Qt would set;
/// elsewhere they keep the priority they have.
void yieldToTheWindow() {
#ifdef __linux__
  thread_local bool lowered = false;
  if (lowered) return;
  lowered = true;
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  if (getpriority(PRIO_PROCESS, tid) < 10) setpriority(PRIO_PROCESS, tid, 10);
#endif
}

}  // namespace

std::shared_ptr<const PlanContext> PlanContext::make(std::shared_ptr<const LoadedRun> run,
                                                     std::shared_ptr<const Network> network) {
  auto c = std::make_shared<PlanContext>();
  c->transferred = network != nullptr;
  c->network = network ? std::move(network) : run->network;
  c->device_memory = run->rows->meta.device_memory;
  c->analysis = analyzeNetwork(*c->network);
  c->planner = std::make_unique<const perf::Planner>(*run->model, *c->network);
  c->run = std::move(run);
  return c;
}

PlanViews makePlanViews(const PlanContext& c, const perf::PlanRequest& request,
                        const perf::PlanResult& result) {
  PlanViews v;
  for (const ViewRow& row : viewTable())
    v.data.push_back(row.build ? row.build(c, request, result) : std::any());
  return v;
}

std::optional<store::PlanFile> PlanOutcome::planFile() const {
  if (!result || !result->trainable || !context) return std::nullopt;
  return perf::toPlanFile(*result, request, *context->run->model, *context->network,
                          context->run->rows->meta.backend, context->run->path);
}

std::optional<perf::PlanResult> planRecorded(const PlanContext& c, const perf::PlanRequest& r,
                                             const store::PlanFile& recorded) {
  if (c.transferred || c.network->structureHash() != recorded.structure_hash ||
      r.budget != recorded.budget || policyName(r.policy) != recorded.policy ||
      r.batch != recorded.k || recorded.sub_batches != 1)
    return std::nullopt;
  perf::PlanResult result = c.planner->plan(r);
  const SwapSet set = collect::planSwapSet(*c.network, recorded, c.run->path + " (table plans)");
  if (result.trainable && result.best.swapped == set) return result;
  // A recorded recompute set cannot be simulated here (evaluate() takes swaps only); a swap
  // set that does not fit is not the plan of this budget: the planner's plan is shown then.
  if (!recorded.recompute.empty()) return result;
  // The executor's own schedule at this budget (its reuse delay and moved prefetches, decided by
  // the same function the run's executor called), not a delay taken from the file.
  std::optional<perf::Evaluation> e = c.planner->evaluate(recorded.k, set, r.budget);
  if (!e) return result;
  result.trainable = true;
  result.reason.clear();
  result.infeasible = false;
  result.best = std::move(*e);
  result.gmap = buildGmap(*c.network, c.planner->costs(), set);
  result.curve = computeMemoryCurve(result.gmap);
  result.t_whole = perf::wholeTrainingSeconds(recorded.k, result.best.sim.t_iter, result.delta, r);
  result.lr = perf::scaledLearningRate(r.lr_base, r.k_base, r.lr_c, recorded.k);
  return result;
}

PlanService::PlanService(QObject* parent)
    : QObject(parent),
      m_planPool(new QThreadPool(this)),
      m_sweepPool(new QThreadPool(this)),
      m_curvePool(new QThreadPool(this)),
      m_sweepId(std::make_shared<std::atomic<int>>(0)) {
  qRegisterMetaType<PlanOutcome>();
  qRegisterMetaType<SweepPoint>();
  qRegisterMetaType<BatchCurveOutcome>();
  m_planPool->setMaxThreadCount(1);
  m_sweepPool->setMaxThreadCount(1);
  m_curvePool->setMaxThreadCount(1);
  m_curveSettle.setSingleShot(true);
  m_curveSettle.setInterval(kCurveSettleMs);
  connect(&m_curveSettle, &QTimer::timeout, this, &PlanService::startCurve);
}

PlanService::~PlanService() {
  cancelSweep();
  m_interactive->store(false);
  m_curvePending.reset();
  m_planPool->waitForDone();
  m_sweepPool->waitForDone();
  m_curvePool->waitForDone();
}

void PlanService::setNetwork(std::shared_ptr<const LoadedRun> run,
                             std::shared_ptr<const Network> network) {
  cancelSweep();
  const quint64 generation = ++m_contextGeneration;
  m_contextPending = true;
  m_context.reset();
  m_curvePending.reset();
  QPointer<PlanService> self(this);
  m_planPool->start([self, generation, run, network] {
    std::shared_ptr<const PlanContext> context;
    QString error;
    try {
      context = PlanContext::make(run, network);
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        self.data(),
        [self, generation, context, error] {
          if (!self || generation != self->m_contextGeneration) return;
          self->m_contextPending = false;
          if (!context) {
            self->m_pending.reset();
            self->m_interactive->store(false);
            emit self->contextFailed(error);
            return;
          }
          self->m_context = context;
          emit self->contextReady();
          self->startNext();
        },
        Qt::QueuedConnection);
  });
}

quint64 PlanService::requestPlan(const perf::PlanRequest& request) {
  m_pending = std::make_pair(++m_seq, request);
  m_latest->store(m_seq);
  m_interactive->store(true);
  m_curveSettle.stop();
  startNext();
  return m_seq;
}

void PlanService::startNext() {
  if (m_running || m_contextPending || !m_context || !m_pending) return;
  const auto [seq, request] = *m_pending;
  m_pending.reset();
  m_running = true;
  QPointer<PlanService> self(this);
  std::shared_ptr<const PlanContext> context = m_context;
  std::shared_ptr<const store::PlanFile> recorded = m_recorded;
  m_planPool->start([self, seq, request, context, recorded] {
    PlanOutcome out;
    out.seq = seq;
    out.request = request;
    out.context = context;
    try {
      std::optional<perf::PlanResult> shown;
      if (recorded) shown = planRecorded(*context, request, *recorded);
      auto result = std::make_shared<perf::PlanResult>(shown ? std::move(*shown)
                                                             : context->planner->plan(request));
      out.views = std::make_shared<const PlanViews>(makePlanViews(*context, request, *result));
      out.result = std::move(result);
    } catch (const std::exception& e) {
      out.error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        self.data(),
        [self, out] {
          if (!self) return;
          self->m_running = false;
          // Stale: a newer request was made while this one ran.
          if (out.seq == self->m_seq && out.context == self->m_context) {
            if (out.result && out.result->trainable) {
              self->m_curvePending = out;
              self->m_curveSettle.start();
            }
            emit self->planReady(out);
          }
          self->startNext();
          if (!self->m_running && !self->m_pending) self->m_interactive->store(false);
        },
        Qt::QueuedConnection);
  });
}

void PlanService::startCurve() {
  if (m_curveRunning || !m_curvePending) return;
  const PlanOutcome plan = std::move(*m_curvePending);
  m_curvePending.reset();
  m_curveRunning = true;
  QPointer<PlanService> self(this);
  std::shared_ptr<const std::atomic<quint64>> latest = m_latest;
  m_curvePool->start([self, plan, latest] {
    BatchCurveOutcome out;
    out.seq = plan.seq;
    try {
      // Stops as soon as a newer plan was asked for: while the budget is dragged, the curves of
      // the positions passed over would only hold up the plan of the newest one.
      out.curve = makeBatchCurve(*plan.context->planner, plan.request, *plan.result, 24,
                                 [&] { return latest->load() != plan.seq; });
    } catch (const std::exception& e) {
      out.curve.budget = plan.request.budget;
      out.curve.reason = e.what();
    }
    QMetaObject::invokeMethod(
        self.data(),
        [self, out] {
          if (!self) return;
          self->m_curveRunning = false;
          if (out.seq == self->m_seq) emit self->batchCurveReady(out);
          self->startCurve();
        },
        Qt::QueuedConnection);
  });
}

int PlanService::requestSweep(const perf::PlanRequest& base, std::int64_t top, int points) {
  const int sweep = ++*m_sweepId;
  std::shared_ptr<const PlanContext> context = m_context;
  if (!context) return sweep;
  const std::int64_t low = context->planner->minBudget();
  const std::int64_t high = top > low ? top : low * 64;
  const std::vector<std::int64_t> budgets = swapscope::sweepBudgets(low, high, points);
  QPointer<PlanService> self(this);
  std::shared_ptr<std::atomic<int>> current = m_sweepId;
  std::shared_ptr<const std::atomic<bool>> interactive = m_interactive;
  m_sweepPool->start([self, sweep, base, context, budgets, current, interactive] {
    // The plan the user asked for first: with two cores, a sweep beside it halves its speed. The
    // sweep waits before each budget, and inside a budget's plan between its pieces of work.
    const auto giveWay = [interactive, current, sweep] {
      while (interactive->load() && current->load() == sweep)
        QThread::msleep(2);
    };
    perf::PlanRequest request = base;
    request.pause_point = giveWay;
    // Budgets on every core at once, up to kMaxSweepLanes (perf::sweep): each a plan of its own
    // on one planner thread, the points drawn as they come. A failure no plan reports as its own
    // (a lane that cannot be started, memory) ends the sweep where it is: nothing may leave a
    // pool's task.
    try {
      perf::sweep(
          *context->planner, request, budgets,
          std::min(kMaxSweepLanes, std::max(1, QThread::idealThreadCount())),
          [self, sweep, current, count = static_cast<int>(budgets.size())](perf::SweepOutcome&& o) {
            SweepPoint p;
            p.sweep = sweep;
            p.index = static_cast<int>(o.index);
            p.count = count;
            p.point.budget = o.budget;
            if (o.plan) {
              p.point = swapscope::sweepPoint(o.budget, *o.plan);
            } else {
              p.point.feasible = false;  // drawn as an infeasible budget
            }
            QMetaObject::invokeMethod(
                self.data(),
                [self, p, current] {
                  if (self && current->load() == p.sweep) emit self->sweepPoint(p);
                },
                Qt::QueuedConnection);
          },
          [giveWay, current, sweep] {
            yieldToTheWindow();
            giveWay();
            return current->load() != sweep;  // cancelled or replaced
          });
    } catch (...) {
    }
    if (current->load() != sweep) return;
    QMetaObject::invokeMethod(
        self.data(),
        [self, sweep, current] {
          if (self && current->load() == sweep) emit self->sweepFinished(sweep);
        },
        Qt::QueuedConnection);
  });
  return sweep;
}

void PlanService::cancelSweep() {
  ++*m_sweepId;
}

}  // namespace swapscope::gui
