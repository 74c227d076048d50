// SPDX-License-Identifier: MIT
#include "importer/onnx_model.h"

#include <cstring>

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/files.h"

namespace swapscope::onnx_detail {
namespace {

/// ONNX files beyond this are refused before reading (protobuf's own limit is 2 GiB).
constexpr std::uint64_t kMaxOnnxFileBytes = std::uint64_t{1} << 31;

/// The values the dimensions of `t` call for; -1 where a dimension is negative or the count
/// overflows (then no tensor's values match it).
std::int64_t elementCount(const onnx::TensorProto& t) {
  std::int64_t n = 1;
  for (std::int64_t d : t.dims()) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

/// Error(BadInput) where the dimensions of `t` count no values, or where it keeps its values in
/// another file (what exporters write for models over 2 GiB): the importer reads only the ONNX
/// file itself.
void refuseUnreadable(const onnx::TensorProto& t, const std::string& what) {
  if (elementCount(t) < 0)
    throwBadInput(what + ": its dimensions are negative or their product overflows 64 bits");
  if (t.data_location() != onnx::TensorProto::EXTERNAL) return;
  std::string location;
  for (const auto& e : t.external_data())
    if (e.key() == "location") location = e.value();
  throwBadInput(what + ": its values are in an external file ('" + location +
                "'), which Swapscope does not read; export the model with its parameters "
                "inside the file, or without them (export_params=False)");
}

}  // namespace

onnx::ModelProto parseModel(const std::string& path) {
  const std::string bytes = files::readInputFile(path, "the ONNX file", kMaxOnnxFileBytes);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    throwBadInput(path + ": not an ONNX model, or cut short (it does not parse as an ONNX " +
                  "ModelProto; a model whose subgraphs nest deeper than protobuf's 100 levels " +
                  "does not either)");
  }
  if (!model.has_graph() || model.ir_version() <= 0 || model.opset_import_size() == 0) {
    throwBadInput(path + ": not an ONNX model (no graph, IR version or operator set)");
  }
  // An operator set newer than the ONNX library's: what its operators mean is not known here
  // (the checker passes it).
  const int newest =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
  for (const onnx::OperatorSetIdProto& set : model.opset_import()) {
    if ((set.domain().empty() || set.domain() == "ai.onnx") && set.version() > newest) {
      throwBadInput(path + ": it imports operator set " + std::to_string(set.version()) +
                    " of the default ONNX domain, newer than the " + std::to_string(newest) +
                    " this Swapscope's ONNX library knows; export with opset_version " +
                    std::to_string(newest) + " or lower");
    }
  }
  // Before the checker, which looks for external data relative to the working folder.
  for (const onnx::TensorProto& t : model.graph().initializer())
    refuseUnreadable(t, path + ": initializer '" + t.name() + "'");
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throwBadInput(path + ": the ONNX checker refuses it: " + e.what());
  }
  return model;
}

void inferShapes(onnx::ModelProto& model, const std::string& path) {
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    throwBadInput(path + ": ONNX shape inference fails on it: " + e.what());
  }
}

bool validUtf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();  // the JSON writer refuses invalid UTF-8
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

std::vector<float> floatValues(const onnx::TensorProto& t, const std::string& what) {
  refuseUnreadable(t, what);
  if (t.data_type() != onnx::TensorProto::FLOAT) {
    throwBadInput(what + ": expected fp32 values, got ONNX data type " +
                  std::to_string(t.data_type()));
  }
  const std::int64_t n = elementCount(t);
  std::vector<float> v;
  if (t.has_raw_data()) {
    if (static_cast<std::int64_t>(t.raw_data().size()) / 4 != n || t.raw_data().size() % 4 != 0) {
      throwBadInput(what + ": holds " + std::to_string(t.raw_data().size()) + " bytes for " +
                    std::to_string(n) + " fp32 values");
    }
    v.resize(static_cast<std::size_t>(n));
    std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());  // little-endian, as ONNX
  } else {
    v.assign(t.float_data().begin(), t.float_data().end());
  }
  if (static_cast<std::int64_t>(v.size()) != n) {
    throwBadInput(what + ": holds " + std::to_string(v.size()) + " values for dimensions of " +
                  std::to_string(n));
  }
  return v;
}

std::vector<std::int64_t> intValues(const onnx::TensorProto& t, const std::string& what) {
  refuseUnreadable(t, what);
  std::vector<std::int64_t> v;
  const std::int64_t n = elementCount(t);
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.has_raw_data()) {
      v.resize(t.raw_data().size() / 8);
      std::memcpy(v.data(), t.raw_data().data(), v.size() * 8);
    } else {
      v.assign(t.int64_data().begin(), t.int64_data().end());
    }
  } else if (t.data_type() == onnx::TensorProto::INT32) {
    if (t.has_raw_data()) {
      std::vector<std::int32_t> w(t.raw_data().size() / 4);
      std::memcpy(w.data(), t.raw_data().data(), w.size() * 4);
      v.assign(w.begin(), w.end());
    } else {
      v.assign(t.int32_data().begin(), t.int32_data().end());
    }
  } else {
    throwBadInput(what + ": expected integers, got ONNX data type " +
                  std::to_string(t.data_type()));
  }
  if (static_cast<std::int64_t>(v.size()) != n) {
    throwBadInput(what + ": holds " + std::to_string(v.size()) + " values for dimensions of " +
                  std::to_string(n));
  }
  return v;
}

}  // namespace swapscope::onnx_detail
