// SPDX-License-Identifier: MIT
/// @brief What the model view draws, without any Qt: for every fitted group of a performance
/// model (one layer type, or one layer, in one direction) the measured medians per k it was
/// fitted to, the three fitted forms sampled for drawing, the chosen form and the residuals;
/// and for PCIe each direction's recorded transfers (bytes, seconds) with the fitted line and
/// the duplex factor (AccUDNN section 4.1: the FLOPS curve and the transfer time model).
///
/// perf::PerfModel keeps the fitted curves and their residuals but not the points they were
/// fitted to, so the points are rebuilt here from the run the same way PerfModel::fit makes
/// them: the median time per (layer, direction, k) over the recorded iterations, against the
/// step's work (perf::stepWork). Point i of a group is the point of residual i of its curves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "perfmodel/model.h"
#include "store/run_db.h"

namespace swapscope {

struct MeasuredPoint {
  double x = 0;  ///< FLOPs, or bytes for a group on the bytes axis
  double t = 0;  ///< seconds: the median over the recorded iterations of the times as fitted
                 ///< (PerfModel::fittedSeconds: less what copies beside the step added)
  std::int64_t k = 0;
  int layer = -1;   ///< the run's layer id
  int samples = 0;  ///< recorded iterations the median is taken over
};

struct ModelGroupData {
  std::string key;    ///< "type/conv/fwd", "layer/conv1/bwd", ... (scope/target/direction)
  std::string label;  ///< for people: "conv, forward (per type)"
  std::string scope, target;
  perf::StepKind kind = perf::StepKind::Forward;
  bool bytes_axis = false;
  std::vector<MeasuredPoint> points;        ///< in the order of the curves' residuals
  std::vector<perf::Curve> curves;          ///< affine, saturating, loglog
  int best = 0;                             ///< the chosen form (lowest cross-validated error)
  std::vector<double> grid_x;               ///< work values to draw the curves at (log-spaced)
  std::vector<std::vector<double>> grid_t;  ///< per curve: predicted seconds at grid_x
  const perf::Curve& chosen() const { return curves.at(static_cast<std::size_t>(best)); }
};

struct PcieTransfer {
  double bytes = 0;
  double seconds = 0;
  std::int64_t k = 0;
  bool overlapped = false;  ///< ran while the other direction was busy (the duplex factor's data)
};

struct PcieDirection {
  bool to_host = false;
  std::vector<PcieTransfer> transfers;
  perf::LinkFit fit;
};

struct ModelData {
  std::string device;
  std::string network;
  std::string path;
  std::string structure_hash;            ///< of the profiled network
  std::vector<std::string> layer_names;  ///< the run's layers, by id
  std::vector<std::string> layer_kinds;
  std::vector<ModelGroupData> groups;  ///< per-type groups first, then per-layer; by key
  PcieDirection h2d, d2h;
  double duplex_factor = 1;
  int duplex_points = 0;  ///< copies it was measured on; 0: not measured (1 assumed)
  /// The index of the group with this key; -1 when none.
  int groupIndex(const std::string& key) const;
};

/// The group key of a step: "<scope>/<target>/<fwd|bwd|update>".
std::string modelGroupKey(const std::string& scope, const std::string& target, perf::StepKind kind);

/// Everything `model` (fitted to `run` by perf::PerfModel::fit) was made from. Transfers that
/// are readbacks or move no bytes are left out, as in the fit.
ModelData makeModelData(const store::RunData& run, const perf::PerfModel& model);

}  // namespace swapscope
