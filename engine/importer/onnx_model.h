// SPDX-License-Identifier: MIT
/// @brief Reading an ONNX file into libonnx's ModelProto, checked and with inferred shapes, and
/// the values of its tensors. Internal to the importer (it exposes libonnx's types).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace swapscope::onnx_detail {

/// Parses `path` and runs onnx::checker. Error(BadInput) naming the file for a file that is not
/// ONNX, is cut short, or that the checker refuses.
onnx::ModelProto parseModel(const std::string& path);

/// Runs onnx::shape_inference on `model` (read from `path`), adding the shapes it finds;
/// Error(BadInput) naming the file where it fails. ONNX's inference trusts some attributes that
/// the checker does not check (a stride of 0 divides by zero): the importer checks those first.
void inferShapes(onnx::ModelProto& model, const std::string& path);

/// Whether `text` is valid UTF-8 (ONNX's strings must be; names become layer names in JSON).
bool validUtf8(const std::string& text);

/// The float values of an fp32 tensor (float_data or raw_data), or Error(BadInput) naming
/// `what` where it holds another type or not as many values as its dimensions say.
std::vector<float> floatValues(const onnx::TensorProto& t, const std::string& what);
/// The values of an integer (int64 or int32) tensor, or Error(BadInput) naming `what`.
std::vector<std::int64_t> intValues(const onnx::TensorProto& t, const std::string& what);

}  // namespace swapscope::onnx_detail
