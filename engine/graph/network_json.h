// SPDX-License-Identifier: MIT
/// @brief Network JSON: the format users describe their own networks in (docs/network-json.md).
///
/// Writing is canonical (every field explicit, layers in topological order), so a network written
/// and read back is equal to the original and writes the same text again.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "common/files.h"
#include "graph/network.h"

namespace swapscope {

inline constexpr const char* kNetworkFormat = "swapscope-network";
inline constexpr int kNetworkFormatVersion = 1;

nlohmann::ordered_json networkToJson(const Network& net);
/// Builds a network from JSON. Errors name the layer and field; `origin` (a file name) prefixes
/// every message when given.
Network networkFromJson(const nlohmann::ordered_json& doc, const std::string& origin = "");
/// Parses network JSON text (a file's or a run database's) and builds the network; errors are
/// prefixed with `origin`.
Network networkFromText(std::string_view text, const std::string& origin);

/// The canonical text of a network file: the header fields, then one layer per line.
std::string networkToText(const Network& net);

Network readNetworkFile(const std::filesystem::path& path);
/// Writes through files::writeOutputFile: an existing file only with rules.force, never an input.
void writeNetworkFile(const Network& net, const std::filesystem::path& path,
                      const files::OutputRules& rules = {});

}  // namespace swapscope
