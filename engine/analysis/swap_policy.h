// SPDX-License-Identifier: MIT
/// @brief Swap sets and the policies that build them. A swap set marks, per layer id, whether that
/// layer's output feature map is offloaded to host memory after its forward use and prefetched
/// before its backward use. Only FMs that some backward step reads can be swapped.
#pragma once

#include <string>
#include <vector>

#include "analysis/layer_cost.h"
#include "analysis/policy.h"
#include "graph/network.h"

namespace swapscope {

/// One flag per layer id: true where the layer's output FM is swapped.
using SwapSet = std::vector<bool>;

/// One flag per layer id: true where the layer's output FM is recomputed (released after its
/// last forward reader, re-made in backward; analysis/gmap.h).
using RecomputeSet = std::vector<bool>;

/// Layers cheap enough to run again in backward (SuperNeurons' light layers as Ito et al.
/// describe them): ReLU, batch norm, pooling, add, concat, flatten, the elementwise activations
/// (clip, sigmoid, hardsigmoid, hardswish) and mul, and dropout (its mask is a
/// function of the seed, so running it again gives the same output).
bool isLightLayer(LayerKind kind);

/// The FMs recompute-light recomputes: some backward step reads the FM, it has a forward
/// reader, and re-making it runs light layers only, back to FMs that backward steps read and that
/// are not recomputed themselves (decided in layer order). Each is then re-made once, at the
/// first backward step that reads it, from kept or prefetched FMs; where a recomputed FM's
/// sources were recomputed too (a ResNet's residual trunk is light from end to end), they would
/// all be re-made at the earliest of those steps and held from there.
std::vector<bool> recomputableFms(const Network& net, const std::vector<LayerCost>& costs);

/// True where layer i's output FM is read by some backward step (so swapping it can save memory).
std::vector<bool> swappableFms(const Network& net, const std::vector<LayerCost>& costs);

/// A fixed policy's swap and recompute sets, made by its row's function (analysis/policy.h);
/// Error(Runtime) for a searched policy.
FixedSets fixedSets(Policy policy, const Network& net, const std::vector<LayerCost>& costs);

/// fixedSets' swap set: Error(Runtime) for a searched policy.
SwapSet makeSwapSet(Policy policy, const Network& net, const std::vector<LayerCost>& costs);

/// fixedSets' recompute set; all false for a searched policy (the planner chooses its recompute
/// set).
RecomputeSet makeRecomputeSet(Policy policy, const Network& net,
                              const std::vector<LayerCost>& costs);

/// A swap set from FM (layer) names; every name must exist and be swappable, else Error(BadInput)
/// naming the entry as `where`[i]`field` ("plan.json: swap_set[0].fm"), the name and the network.
SwapSet swapSetFromNames(const Network& net, const std::vector<LayerCost>& costs,
                         const std::vector<std::string>& names,
                         const std::string& where = "swap set", const std::string& field = "");

/// A recompute set from FM (layer) names, checked as swapSetFromNames checks a swap set (every
/// name a layer whose FM some backward step reads; Error(BadInput) naming `where`[i]`field`).
/// Whether each can be re-made is buildGmap's check.
RecomputeSet recomputeSetFromNames(const Network& net, const std::vector<LayerCost>& costs,
                                   const std::vector<std::string>& names,
                                   const std::string& where = "recompute set",
                                   const std::string& field = "");

}  // namespace swapscope
