// SPDX-License-Identifier: MIT
/// @brief The options every verb uses to name a network: --model NAME | --net FILE |
/// --onnx FILE, with --input CxHxW (zoo and ONNX models) and --classes N (zoo models).
#pragma once

#include "analysis/swap_policy.h"
#include "graph/network.h"
#include "options/args.h"

namespace swapscope::cli {

void addNetworkOptions(ArgParser& args);
/// Builds the zoo model, reads the network file or imports the ONNX model the options name;
/// Error(BadInput) otherwise.
Network loadNetwork(const ArgParser& args);
/// Refuses `--onnx -` (an ONNX model is read from a named file, never from standard input) with
/// refuseStandardInput's message, for a verb that reads other inputs before the network
/// (loadNetwork refuses it too).
void refuseOnnxFromStandardInput(const ArgParser& args);
/// --input and --classes shape a zoo model: Error(BadInput) where they are given without --model
/// (with --net too, as loadNetwork says). `otherwise` names the network the verb takes instead.
void checkZooOptions(const ArgParser& args, const std::string& otherwise);
/// A network and, for an ONNX model that holds them, its initializers as initial weights (per
/// layer in the kernel layout; empty where there are none).
struct LoadedNetwork {
  Network net;
  std::vector<std::vector<float>> weights, running_stats;
};
LoadedNetwork loadNetworkAndWeights(const ArgParser& args);
/// The required --batch option, from 1 to kMaxBatch (ArgParser::batch); Error(BadInput)
/// otherwise.
std::int64_t batchOption(const ArgParser& args);
/// The --policy option, a fixed policy (default keep-all); Error(BadInput) naming the choices
/// otherwise.
Policy policyOption(const ArgParser& args);
/// The policy named `name` among `rows` (the table's fixed rows, or all of them); Error(BadInput)
/// naming the value and the choices otherwise. `swapscope plan`, `train` and the app use it.
Policy parsePolicy(const std::string& name, PolicyRows rows);
/// Parses a number in [lo, hi]; Error(BadInput) naming `what` otherwise.
double parseNumber(const std::string& text, const std::string& what, double lo, double hi);
/// The --seed option (default 1), an integer from 0 to 2^53.
std::uint64_t seedOption(const ArgParser& args);
/// Parses "3x224x224" (or "784" for flat inputs); Error(BadInput) naming `what`.
Shape parseShape(const std::string& text, const std::string& what);

}  // namespace swapscope::cli
