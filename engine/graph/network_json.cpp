// SPDX-License-Identifier: MIT
#include "graph/network_json.h"

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/files.h"
#include "graph/json_guard.h"

namespace swapscope {
namespace {

using json = nlohmann::ordered_json;

json pair(std::int64_t a, std::int64_t b) {
  return json::array({a, b});
}

// --- writing ---------------------------------------------------------------------------------

json layerToJson(const Layer& l) {
  json j;
  j["name"] = l.name;
  j["type"] = std::string(layerKindName(l.kind));
  if (l.kind != LayerKind::Input) j["inputs"] = l.inputs;
  std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, InputAttrs>) {
          j["shape"] = a.shape.dims;
        } else if constexpr (std::is_same_v<T, Conv2dAttrs>) {
          if (a.in_channels) j["in_channels"] = *a.in_channels;
          j["out_channels"] = a.out_channels;
          j["kernel"] = pair(a.kernel_h, a.kernel_w);
          j["stride"] = pair(a.stride_h, a.stride_w);
          j["padding"] = pair(a.pad_h, a.pad_w);
          j["groups"] = a.groups;
          j["bias"] = a.bias;
        } else if constexpr (std::is_same_v<T, BatchNormAttrs>) {
          if (a.num_features) j["num_features"] = *a.num_features;
          j["eps"] = a.eps;
          j["momentum"] = a.momentum;
        } else if constexpr (std::is_same_v<T, PoolAttrs>) {
          j["kernel"] = pair(a.kernel_h, a.kernel_w);
          j["stride"] = pair(a.stride_h, a.stride_w);
          j["padding"] = pair(a.pad_h, a.pad_w);
          j["ceil_mode"] = a.ceil_mode;
          if (l.kind == LayerKind::AvgPool2d) j["count_include_pad"] = a.count_include_pad;
        } else if constexpr (std::is_same_v<T, AdaptivePoolAttrs>) {
          j["output_size"] = pair(a.out_h, a.out_w);
        } else if constexpr (std::is_same_v<T, LinearAttrs>) {
          if (a.in_features) j["in_features"] = *a.in_features;
          j["out_features"] = a.out_features;
          j["bias"] = a.bias;
        } else if constexpr (std::is_same_v<T, DropoutAttrs>) {
          j["p"] = a.p;
        } else if constexpr (std::is_same_v<T, ClipAttrs>) {
          if (a.min) j["min"] = *a.min;
          if (a.max) j["max"] = *a.max;
        } else if constexpr (std::is_same_v<T, HardSigmoidAttrs>) {
          j["alpha"] = a.alpha;
          j["beta"] = a.beta;
        }
      },
      l.attrs);
  return j;
}

// --- reading ---------------------------------------------------------------------------------

/// Reads the fields of one layer object and reports every problem with the layer's name.
class FieldReader {
 public:
  FieldReader(const json& obj, std::string who) : m_obj(obj), m_who(std::move(who)) {}

  [[noreturn]] void fail(const std::string& msg) const { throwBadInput(m_who + ": " + msg); }

  bool has(const char* field) {
    m_known.insert(field);
    return m_obj.contains(field);
  }
  const json& get(const char* field) {
    if (!has(field)) fail("missing required field '" + std::string(field) + "'");
    return m_obj.at(field);
  }

  std::int64_t integer(const char* field) { return asInt(field, get(field)); }
  std::int64_t integer(const char* field, std::int64_t fallback) {
    return has(field) ? asInt(field, m_obj.at(field)) : fallback;
  }
  std::optional<std::int64_t> optionalInteger(const char* field) {
    if (!has(field)) return std::nullopt;
    return asInt(field, m_obj.at(field));
  }
  std::optional<double> optionalNumber(const char* field) {
    if (!has(field)) return std::nullopt;
    return number(field, 0.0);
  }
  double number(const char* field, double fallback) {
    if (!has(field)) return fallback;
    const json& v = m_obj.at(field);
    if (!v.is_number()) fail(typeError(field, "a number", v));
    return v.get<double>();
  }
  bool boolean(const char* field, bool fallback) {
    if (!has(field)) return fallback;
    const json& v = m_obj.at(field);
    if (!v.is_boolean()) fail(typeError(field, "true or false", v));
    return v.get<bool>();
  }
  /// A field that is an integer or a [h, w] pair.
  std::pair<std::int64_t, std::int64_t> hw(const char* field) { return asHw(field, get(field)); }
  std::pair<std::int64_t, std::int64_t> hw(const char* field,
                                           std::pair<std::int64_t, std::int64_t> fallback) {
    return has(field) ? asHw(field, m_obj.at(field)) : fallback;
  }
  std::vector<std::int64_t> intList(const char* field) {
    const json& v = get(field);
    if (!v.is_array()) fail(typeError(field, "an array of integers", v));
    std::vector<std::int64_t> out;
    for (const json& e : v) {
      if (!e.is_number_integer()) fail(typeError(field, "an array of integers", v));
      out.push_back(asInt(field, e));
    }
    return out;
  }
  std::vector<std::string> stringList(const char* field) {
    const json& v = get(field);
    if (!v.is_array()) fail(typeError(field, "an array of layer names", v));
    std::vector<std::string> out;
    for (const json& e : v) {
      if (!e.is_string()) fail(typeError(field, "an array of layer names", v));
      const auto& name = e.get_ref<const std::string&>();
      if (name.size() > kMaxNameBytes) {
        fail("field '" + std::string(field) + "' holds a name of " + std::to_string(name.size()) +
             " bytes, more than " + std::to_string(kMaxNameBytes));
      }
      out.push_back(name);
    }
    return out;
  }
  /// Every field the kind does not know is an error, so typos do not pass silently.
  void rejectUnknownFields() const {
    for (auto it = m_obj.begin(); it != m_obj.end(); ++it) {
      if (!m_known.count(it.key())) {
        fail("unknown field '" + echoText(it.key()) + "' (known fields: " + knownList() + ")");
      }
    }
  }

 private:
  std::string typeError(const char* field, const char* expected, const json& v) const {
    return "field '" + std::string(field) + "' must be " + expected + ", got " + echoJson(v);
  }
  /// Every integer field is a size, count or offset that the kernels hold in 32 bits: a value
  /// beyond that range is refused as written, never truncated or wrapped.
  std::int64_t asInt(const char* field, const json& v) const {
    if (!v.is_number_integer()) fail(typeError(field, "an integer", v));
    const bool tooLarge = v.is_number_unsigned()
                              ? v.get<std::uint64_t>() > std::uint64_t{kMaxLayerInteger}
                              : v.get<std::int64_t>() > kMaxLayerInteger;
    if (tooLarge) {
      fail("field '" + std::string(field) + "' must be at most " +
           std::to_string(kMaxLayerInteger) + ", got " + v.dump());
    }
    if (v.get<std::int64_t>() < -kMaxLayerInteger - 1) {
      fail("field '" + std::string(field) + "' must be at least " +
           std::to_string(-kMaxLayerInteger - 1) + ", got " + v.dump());
    }
    return v.get<std::int64_t>();
  }
  std::pair<std::int64_t, std::int64_t> asHw(const char* field, const json& v) const {
    if (v.is_number_integer()) return {asInt(field, v), asInt(field, v)};
    if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer()) {
      return {asInt(field, v[0]), asInt(field, v[1])};
    }
    fail(typeError(field, "an integer or an [h, w] pair of integers", v));
  }
  std::string knownList() const {
    std::string s;
    for (const auto& k : m_known)
      s += (s.empty() ? "" : ", ") + k;
    return s;
  }

  const json& m_obj;
  std::string m_who;
  std::set<std::string> m_known{"name", "type", "inputs"};
};

Layer layerFromJson(const json& j, std::size_t index) {
  const std::string where = "layer #" + std::to_string(index);
  if (!j.is_object()) throwBadInput(where + ": must be a JSON object, got " + echoJson(j));
  if (!j.contains("name")) throwBadInput(where + ": missing required field 'name'");
  if (!j.at("name").is_string() || j.at("name").get_ref<const std::string&>().empty()) {
    throwBadInput(where + ": field 'name' must be a non-empty string, got " +
                  echoJson(j.at("name")));
  }
  if (const std::size_t size = j.at("name").get_ref<const std::string&>().size();
      size > kMaxNameBytes) {
    throwBadInput(where + ": field 'name' is " + std::to_string(size) + " bytes long, more than " +
                  std::to_string(kMaxNameBytes));
  }
  Layer l;
  l.name = j.at("name").get<std::string>();
  const std::string named = "layer '" + l.name + "'";
  if (!j.contains("type")) throwBadInput(named + ": missing required field 'type'");
  if (!j.at("type").is_string()) {
    throwBadInput(named + ": field 'type' must be a string, got " + echoJson(j.at("type")));
  }
  const std::string type = j.at("type").get<std::string>();
  const auto kind = layerKindFromName(type);
  if (!kind) {
    throwBadInput(named + ": unknown layer type '" + echoText(type) +
                  "' (known types: " + allLayerKindNames() + ")");
  }
  l.kind = *kind;
  FieldReader f(j, named + " (" + type + ")");
  if (l.kind == LayerKind::Input) {
    if (f.has("inputs") && !(j.at("inputs").is_array() && j.at("inputs").empty())) {
      f.fail("an input layer takes no inputs");
    }
  } else {
    l.inputs = f.stringList("inputs");
  }

  switch (l.kind) {
    case LayerKind::Input:
      l.attrs = InputAttrs{Shape{f.intList("shape")}};
      break;
    case LayerKind::Conv2d: {
      Conv2dAttrs a;
      a.in_channels = f.optionalInteger("in_channels");
      a.out_channels = f.integer("out_channels");
      std::tie(a.kernel_h, a.kernel_w) = f.hw("kernel");
      std::tie(a.stride_h, a.stride_w) = f.hw("stride", {1, 1});
      std::tie(a.pad_h, a.pad_w) = f.hw("padding", {0, 0});
      a.groups = f.integer("groups", 1);
      a.bias = f.boolean("bias", true);
      l.attrs = a;
      break;
    }
    case LayerKind::BatchNorm2d: {
      BatchNormAttrs a;
      a.num_features = f.optionalInteger("num_features");
      a.eps = f.number("eps", a.eps);
      a.momentum = f.number("momentum", a.momentum);
      l.attrs = a;
      break;
    }
    case LayerKind::MaxPool2d:
    case LayerKind::AvgPool2d: {
      PoolAttrs a;
      std::tie(a.kernel_h, a.kernel_w) = f.hw("kernel");
      std::tie(a.stride_h, a.stride_w) = f.hw("stride", {a.kernel_h, a.kernel_w});
      std::tie(a.pad_h, a.pad_w) = f.hw("padding", {0, 0});
      a.ceil_mode = f.boolean("ceil_mode", false);
      if (l.kind == LayerKind::AvgPool2d)
        a.count_include_pad = f.boolean("count_include_pad", true);
      l.attrs = a;
      break;
    }
    case LayerKind::AdaptiveAvgPool2d: {
      AdaptivePoolAttrs a;
      std::tie(a.out_h, a.out_w) = f.hw("output_size");
      l.attrs = a;
      break;
    }
    case LayerKind::Linear: {
      LinearAttrs a;
      a.in_features = f.optionalInteger("in_features");
      a.out_features = f.integer("out_features");
      a.bias = f.boolean("bias", true);
      l.attrs = a;
      break;
    }
    case LayerKind::Dropout:
      l.attrs = DropoutAttrs{f.number("p", 0.5)};
      break;
    case LayerKind::Clip:
      l.attrs = ClipAttrs{f.optionalNumber("min"), f.optionalNumber("max")};
      break;
    case LayerKind::HardSigmoid: {
      HardSigmoidAttrs a;
      a.alpha = f.number("alpha", a.alpha);
      a.beta = f.number("beta", a.beta);
      l.attrs = a;
      break;
    }
    case LayerKind::Sigmoid:
    case LayerKind::HardSwish:
    case LayerKind::Mul:
    case LayerKind::ReLU:
    case LayerKind::Add:
    case LayerKind::Concat:
    case LayerKind::Flatten:
    case LayerKind::SoftmaxCrossEntropy:
      l.attrs = NoAttrs{};
      break;
  }
  f.rejectUnknownFields();
  return l;
}

}  // namespace

json networkToJson(const Network& net) {
  json layers = json::array();
  for (const Layer& l : net.layers())
    layers.push_back(layerToJson(l));
  json doc;
  doc["format"] = kNetworkFormat;
  doc["version"] = kNetworkFormatVersion;
  doc["name"] = net.name();
  doc["layers"] = std::move(layers);
  return doc;
}

Network networkFromJson(const json& doc, const std::string& origin) {
  try {
    // Nothing below recurses over the document, but a caller may: refuse what no network needs.
    if (jsonTooDeep(doc)) {
      throwBadInput("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    if (!doc.is_object()) throwBadInput("a network must be a JSON object");
    // Unknown fields are errors here as in a layer, so that a typo does not pass silently.
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      if (it.key() != "format" && it.key() != "version" && it.key() != "name" &&
          it.key() != "layers") {
        throwBadInput("unknown field '" + echoText(it.key()) +
                      "' (known fields: format, layers, name, version)");
      }
    }
    if (!doc.contains("format") || doc.at("format") != kNetworkFormat) {
      throwBadInput(
          std::string("field 'format' must be \"") + kNetworkFormat + "\"" +
          (doc.contains("format") ? ", got " + echoJson(doc.at("format")) : ", it is missing"));
    }
    const json* version = doc.contains("version") ? &doc.at("version") : nullptr;
    if (version == nullptr || !version->is_number_integer()) {
      throwBadInput("field 'version' must be an integer");
    }
    if (version->is_number_unsigned()
            ? version->get<std::uint64_t>() != std::uint64_t{kNetworkFormatVersion}
            : version->get<std::int64_t>() != std::int64_t{kNetworkFormatVersion}) {
      throwBadInput("network format version " + version->dump() +
                    " is not supported (this build reads version " +
                    std::to_string(kNetworkFormatVersion) + ")");
    }
    if (!doc.contains("name") || !doc.at("name").is_string()) {
      throwBadInput("field 'name' must be a string");
    }
    if (const std::size_t size = doc.at("name").get_ref<const std::string&>().size();
        size > kMaxNameBytes) {
      throwBadInput("field 'name' is " + std::to_string(size) + " bytes long, more than " +
                    std::to_string(kMaxNameBytes));
    }
    if (!doc.contains("layers") || !doc.at("layers").is_array()) {
      throwBadInput("field 'layers' must be an array of layer objects");
    }
    if (doc.at("layers").size() > kMaxLayers) {
      throwBadInput("field 'layers' has " + std::to_string(doc.at("layers").size()) +
                    " layers, more than the " + std::to_string(kMaxLayers) + " a network may have");
    }
    std::vector<Layer> layers;
    std::size_t i = 0;
    for (const json& lj : doc.at("layers"))
      layers.push_back(layerFromJson(lj, i++));
    return Network::build(doc.at("name").get<std::string>(), std::move(layers));
  } catch (const Error& e) {
    if (origin.empty()) throw;
    throw Error(e.kind(), origin + ": " + e.what());
  }
}

Network networkFromText(std::string_view text, const std::string& origin) {
  const std::string prefix = origin.empty() ? "" : origin + ": ";
  if (text.substr(0, 16) == std::string_view("SQLite format 3\0", 16)) {
    throwBadInput(prefix +
                  "an SQLite database (a run database?), not a network JSON file; a run "
                  "database is read with --db");
  }
  // Checked on the text, before the parser allocates a level per bracket. A text that does not
  // open a JSON container fails the parse at its first character instead (binary bytes hold
  // brackets that would read as nesting).
  refuseNulByte(text, origin.empty() ? "the network JSON" : origin);
  const std::string_view bom = "\xEF\xBB\xBF";  // the parser skips a UTF-8 byte-order mark
  const auto first = text.find_first_not_of(" \t\r\n", text.substr(0, 3) == bom ? bom.size() : 0);
  const bool container =
      first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
  if (const auto at = container ? jsonTooDeepAt(text) : std::nullopt) {
    throwBadInput(prefix + "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                  " levels at " + describeTextOffset(text, *at));
  }
  json doc;
  try {
    doc = parseOrderedJsonUniqueKeys(text, origin.empty() ? "the network JSON" : origin);
  } catch (const json::parse_error& e) {
    throwBadInput(prefix + "not valid JSON: " + boundedParseError(e.what()));
  } catch (const json::exception& e) {
    // e.g. out_of_range.406: a number such as 1e400 that no double holds.
    throwBadInput(prefix + "not valid JSON: " + boundedParseError(e.what()));
  }
  return networkFromJson(doc, origin);
}

std::string networkToText(const Network& net) {
  // One layer per line: readable, and a diff of two networks shows the layers that changed.
  const json doc = networkToJson(net);
  std::string s = "{\n";
  for (const char* key : {"format", "version", "name"}) {
    s += "  \"" + std::string(key) + "\": " + doc.at(key).dump() + ",\n";
  }
  s += "  \"layers\": [\n";
  const json& layers = doc.at("layers");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    s += "    " + layers[i].dump() + (i + 1 < layers.size() ? ",\n" : "\n");
  }
  return s + "  ]\n}\n";
}

Network readNetworkFile(const std::filesystem::path& path) {
  const std::string text =
      files::readInputFile(path.string(), "the network file", files::kMaxJsonFileBytes);
  return networkFromText(text, path.string());
}

void writeNetworkFile(const Network& net, const std::filesystem::path& path,
                      const files::OutputRules& rules) {
  files::writeOutputFile(path.string(), "the network file", networkToText(net), rules);
}

}  // namespace swapscope
