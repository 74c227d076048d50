// SPDX-License-Identifier: MIT
#include "importer/onnx_import.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include "common/error.h"
#include "common/format.h"
#include "common/tensor_values.h"
#include "importer/onnx_model.h"

namespace swapscope {
namespace {

using onnx_detail::floatValues;
using onnx_detail::intValues;

constexpr const char* kSupported[] = {"Add",
                                      "AveragePool",
                                      "BatchNormalization",
                                      "Clip",
                                      "Concat",
                                      "Constant",
                                      "Conv",
                                      "Dropout",
                                      "Flatten",
                                      "Gemm",
                                      "GlobalAveragePool",
                                      "HardSigmoid",
                                      "HardSwish",
                                      "Identity",
                                      "MaxPool",
                                      "Mul",
                                      "Pad",
                                      "ReduceMean",
                                      "Relu",
                                      "Sigmoid"};

/// A Pad node's output, waiting for the convolution or average pooling that reads it.
struct PendingPad {
  std::string source;  ///< the layer the Pad reads
  std::int64_t top = 0, left = 0, bottom = 0, right = 0;
};

/// Parameters of one layer as ONNX value names, resolved to values once the graph is read.
struct ParamRefs {
  std::vector<std::string> weights;  ///< in the kernel layout's order
  std::vector<std::string> stats;    ///< running mean, running variance
  bool transpose = false;            ///< Gemm with transB = 0: B is [in, out]
};

class Importer {
 public:
  Importer(const std::string& path, const onnx::ModelProto& model, OnnxImportOptions options)
      : m_path(path), m_model(model), m_graph(model.graph()), m_options(std::move(options)) {
    for (int i = 0; i < m_graph.node_size(); ++i) {
      for (const auto& o : m_graph.node(i).output())
        m_producer[o] = i;
    }
  }

  /// What ONNX's shape inference would otherwise trust, checked before it runs (it divides by a
  /// stride of 0): every node's operator maps (an operator that does not is refused here, naming
  /// the node, so that inference meets only the ones below), names are UTF-8 (they become layer
  /// names in JSON), and windows have positive kernels, strides and dilations.
  void checkBeforeInference() const {
    for (int i = 0; i < m_graph.input_size(); ++i) {
      if (!onnx_detail::validUtf8(m_graph.input(i).name())) {
        throwBadInput(m_path + ": graph input #" + std::to_string(i) +
                      " has a name that is not valid UTF-8");
      }
    }
    for (int i = 0; i < m_graph.node_size(); ++i) {
      const onnx::NodeProto& n = m_graph.node(i);
      if (!onnx_detail::validUtf8(n.name())) {
        throwBadInput(m_path + ": node #" + std::to_string(i) + " (" + n.op_type() +
                      "): its name is not valid UTF-8");
      }
      const std::string& op = n.op_type();
      if (!n.domain().empty() && n.domain() != "ai.onnx") {
        refuse(i, n,
               "operator " + op + " of domain '" + n.domain() +
                   "' does not map onto a Swapscope layer (only the default ONNX domain's "
                   "operators do: " +
                   supportedOnnxOperators() + ")");
      }
      if (op != "Cast" &&
          std::find_if(std::begin(kSupported), std::end(kSupported),
                       [&](const char* s) { return op == s; }) == std::end(kSupported)) {
        unsupported(i, n);
      }
      if (op == "Conv" || op == "MaxPool" || op == "AveragePool") {
        for (const char* name : {"kernel_shape", "strides", "dilations"}) {
          const auto v = intsAttr(n, name, {});
          if (std::any_of(v.begin(), v.end(), [](std::int64_t x) { return x < 1; }))
            refuse(i, n, std::string(name) + " " + listOf(v) + " must be positive");
        }
      }
    }
  }

  OnnxModel run() {
    indexGraph();
    addInputLayer();
    for (int i = 0; i < m_graph.node_size(); ++i)
      mapNode(i, m_graph.node(i));
    addLoss();
    // Named after the file: exporters name the graph after themselves ("torch_jit").
    std::string name = std::filesystem::path(m_path).stem().string();
    if (name.empty()) name = "onnx";
    if (!onnx_detail::validUtf8(name)) {
      throwBadInput(m_path +
                    ": the file's name is not valid UTF-8, and the network is named "
                    "after it; rename the file");
    }
    OnnxModel out{Network::build(name, std::move(m_layers)), {}, {}};
    checkParameters(out.net);
    if (!m_options.input) checkShapes(out.net);
    readWeights(out);
    return out;
  }

 private:
  // --- messages ------------------------------------------------------------------------------
  /// "[64,3,11,11]", as Shape prints dimensions in every message.
  static std::string listOf(const std::vector<std::int64_t>& v) { return Shape{v}.toString(); }
  std::string where(int index, const onnx::NodeProto& n) const {
    std::string s =
        "node #" + std::to_string(index) + " '" + nodeName(index, n) + "' (" + n.op_type() + ")";
    if (n.input_size() > 0 && !n.input(0).empty()) {
      auto it = m_producer.find(n.input(0));
      s += ", reading '" + n.input(0) + "'";
      if (it != m_producer.end()) s += " from node #" + std::to_string(it->second);
    }
    return s;
  }
  [[noreturn]] void refuse(int index, const onnx::NodeProto& n, const std::string& why) const {
    throwBadInput(m_path + ": " + where(index, n) + ": " + why);
  }
  [[noreturn]] void unsupported(int index, const onnx::NodeProto& n) const {
    refuse(index, n,
           "operator " + n.op_type() + " does not map onto a Swapscope layer (supported: " +
               supportedOnnxOperators() + ")");
  }
  std::string nodeName(int index, const onnx::NodeProto& n) const {
    return n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
  }

  // --- the graph's values ---------------------------------------------------------------------
  void indexGraph() {
    for (const auto& t : m_graph.initializer())
      m_constants[t.name()] = &t;
    for (int i = 0; i < m_graph.node_size(); ++i) {
      const auto& n = m_graph.node(i);
      if (n.op_type() == "Constant") {
        for (const auto& a : n.attribute())
          if (a.name() == "value" && a.has_t()) m_constants[n.output(0)] = &a.t();
      }
      for (const auto& in : n.input())
        ++m_readers[in];
    }
    for (const auto& o : m_graph.output())
      ++m_readers[o.name()];
    for (const auto& v : m_graph.value_info())
      m_types[v.name()] = &v.type();
    for (const auto& v : m_graph.input())
      m_types[v.name()] = &v.type();
    for (const auto& v : m_graph.output())
      m_types[v.name()] = &v.type();
  }

  /// Names read as parameters (conv and gemm weights and biases, batch norm's four tensors).
  std::set<std::string> parameterNames() const {
    std::set<std::string> names;
    for (const auto& n : m_graph.node()) {
      const std::string& op = n.op_type();
      if (op == "Conv" || op == "Gemm" || op == "BatchNormalization") {
        for (int i = 1; i < n.input_size(); ++i)
          names.insert(n.input(i));
      }
    }
    return names;
  }

  void addInputLayer() {
    const std::set<std::string> params = parameterNames();
    std::vector<const onnx::ValueInfoProto*> data;
    for (const auto& v : m_graph.input()) {
      if (!m_constants.count(v.name()) && !params.count(v.name())) data.push_back(&v);
    }
    if (data.empty()) throwBadInput(m_path + ": the graph has no data input");
    if (data.size() > 1) {
      throwBadInput(m_path + ": the graph has " + std::to_string(data.size()) + " data inputs ('" +
                    data[0]->name() + "' and '" + data[1]->name() +
                    "'); Swapscope trains networks with exactly one");
    }
    const onnx::ValueInfoProto& in = *data[0];
    Shape shape;
    if (m_options.input) {
      shape = *m_options.input;
    } else {
      const std::string who = m_path + ": graph input '" + in.name() + "'";
      if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) {
        throwBadInput(who + " has no shape; give the per-sample shape with --input CxHxW");
      }
      const auto& dims = in.type().tensor_type().shape().dim();
      if (dims.size() != 4 && dims.size() != 2) {
        throwBadInput(who + " has rank " + std::to_string(dims.size()) +
                      "; expected [N,C,H,W] or [N,F]");
      }
      for (int d = 1; d < dims.size(); ++d) {
        if (!dims[d].has_dim_value()) {
          throwBadInput(who + ": dimension " + std::to_string(d) +
                        " has no fixed size; give the per-sample shape with --input CxHxW");
        }
        shape.dims.push_back(dims[d].dim_value());
      }
    }
    m_inputName = in.name();
    m_names.insert(in.name());  // a node of the same name is renamed, as two nodes are
    m_layers.push_back({in.name(), LayerKind::Input, {}, InputAttrs{shape}});
    m_layerOf[in.name()] = in.name();
  }

  // --- attributes and constants ---------------------------------------------------------------
  static const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  static std::int64_t intAttr(const onnx::NodeProto& n, const char* name, std::int64_t fallback) {
    const auto* a = attr(n, name);
    return a ? a->i() : fallback;
  }
  static double floatAttr(const onnx::NodeProto& n, const char* name, double fallback) {
    const auto* a = attr(n, name);
    return a ? static_cast<double>(a->f()) : fallback;
  }
  static std::vector<std::int64_t> intsAttr(const onnx::NodeProto& n, const char* name,
                                            std::vector<std::int64_t> fallback) {
    const auto* a = attr(n, name);
    if (!a) return fallback;
    return {a->ints().begin(), a->ints().end()};
  }
  std::string stringAttr(const onnx::NodeProto& n, const char* name) const {
    const auto* a = attr(n, name);
    return a ? a->s() : std::string();
  }
  /// The constant (an initializer or a Constant node's value) that input `slot` reads.
  const onnx::TensorProto* constantInput(const onnx::NodeProto& n, int slot) const {
    if (slot >= n.input_size() || n.input(slot).empty()) return nullptr;
    auto it = m_constants.find(n.input(slot));
    return it == m_constants.end() ? nullptr : it->second;
  }
  double scalar(int index, const onnx::NodeProto& n, int slot, const char* what) const {
    const auto* t = constantInput(n, slot);
    if (!t) refuse(index, n, std::string("its ") + what + " is not a constant");
    const std::string label = m_path + ": " + where(index, n) + ": its " + what;
    if (t->data_type() == onnx::TensorProto::FLOAT) {
      const auto v = floatValues(*t, label);
      if (v.size() != 1) refuse(index, n, std::string("its ") + what + " is not a scalar");
      return static_cast<double>(v[0]);
    }
    if (t->data_type() == onnx::TensorProto::BOOL) {
      if (t->has_raw_data() && t->raw_data().size() == 1) return t->raw_data()[0] != 0;
      if (t->int32_data_size() == 1) return t->int32_data(0) != 0;
    }
    refuse(index, n, std::string("its ") + what + " is not an fp32 or boolean scalar");
  }

  /// The layer that produces the data value `name`, refusing a constant or a value no mapped
  /// node produced.
  std::string dataInput(int index, const onnx::NodeProto& n, const std::string& name) const {
    if (m_pads.count(name)) {
      refuse(index, n,
             "reads the output of Pad '" + name +
                 "', which folds only into Conv or AveragePool with count_include_pad");
    }
    auto it = m_layerOf.find(name);
    if (it != m_layerOf.end()) return it->second;
    if (m_constants.count(name)) {
      refuse(index, n, "reads the constant '" + name + "' as data; only layer outputs are data");
    }
    refuse(index, n, "reads '" + name + "', which no mapped node produces");
  }

  /// Records that the node's first output is the layer `layer`, and that no other output is
  /// read (batch norm's running statistics, dropout's mask, max pooling's indices).
  void produce(int index, const onnx::NodeProto& n, const std::string& layer) {
    for (int o = 1; o < n.output_size(); ++o) {
      if (!n.output(o).empty() && m_readers.count(n.output(o))) {
        refuse(index, n,
               "its output #" + std::to_string(o) + " '" + n.output(o) +
                   "' is read, and only the first output maps");
      }
    }
    m_layerOf[n.output(0)] = layer;
  }
  void push(int index, const onnx::NodeProto& n, LayerKind kind, std::vector<std::string> inputs,
            LayerAttrs attrs, ParamRefs params = {}) {
    std::string name = nodeName(index, n);
    if (m_names.count(name)) name += "#" + std::to_string(index);
    m_names.insert(name);
    m_layers.push_back({name, kind, std::move(inputs), std::move(attrs)});
    m_params[name] = std::move(params);
    m_nodeOf[name] = index;
    produce(index, n, name);
  }

  // --- windows (Conv, MaxPool, AveragePool) ----------------------------------------------------
  struct Window {
    std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
    std::string source;
    bool foldedPad = false;  ///< a Pad node's padding is part of ph and pw
  };
  /// Kernel, strides and pads of a 2-d window, with a Pad it reads folded in; pads must come out
  /// the same on both sides.
  Window window(int index, const onnx::NodeProto& n, std::vector<std::int64_t> kernel,
                bool padFolds) const {
    Window w;
    const std::string autoPad = stringAttr(n, "auto_pad");
    if (!autoPad.empty() && autoPad != "NOTSET" && autoPad != "VALID") {
      refuse(index, n, "auto_pad " + autoPad + " is not supported; export with explicit pads");
    }
    // VALID is no padding: ONNX forbids pads beside it, and the two would give other shapes.
    if (autoPad == "VALID" && attr(n, "pads") != nullptr) {
      const auto given = intsAttr(n, "pads", {});
      if (std::any_of(given.begin(), given.end(), [](std::int64_t p) { return p != 0; })) {
        refuse(index, n, "it has auto_pad VALID (no padding) and pads too, which ONNX forbids");
      }
    }
    if (kernel.size() != 2) refuse(index, n, "only 2-d windows map");
    const auto strides = intsAttr(n, "strides", {1, 1});
    const auto dil = intsAttr(n, "dilations", {1, 1});
    auto pads = intsAttr(n, "pads", {0, 0, 0, 0});
    if (strides.size() != 2 || pads.size() != 4 || dil.size() != 2) {
      refuse(index, n, "only 2-d windows map");
    }
    if (dil[0] != 1 || dil[1] != 1) {
      refuse(index, n,
             "dilations " + std::to_string(dil[0]) + "x" + std::to_string(dil[1]) +
                 " are not supported (Swapscope's windows are dense)");
    }
    const std::string& in = n.input(0);
    if (auto it = m_pads.find(in); it != m_pads.end()) {
      if (!padFolds) {
        refuse(index, n,
               "reads the Pad '" + in +
                   "'; a zero Pad folds only into Conv, and into AveragePool with "
                   "count_include_pad or without pads of its own (max pooling pads "
                   "with -inf)");
      }
      pads[0] += it->second.top;
      pads[1] += it->second.left;
      pads[2] += it->second.bottom;
      pads[3] += it->second.right;
      w.source = it->second.source;
      w.foldedPad = true;
    } else {
      w.source = dataInput(index, n, in);
    }
    if (pads[0] != pads[2] || pads[1] != pads[3]) {
      refuse(index, n,
             "asymmetric pads [" + std::to_string(pads[0]) + "," + std::to_string(pads[1]) + "," +
                 std::to_string(pads[2]) + "," + std::to_string(pads[3]) +
                 "] (top, left, bottom, right) do not map");
    }
    w.kh = kernel[0];
    w.kw = kernel[1];
    w.sh = strides[0];
    w.sw = strides[1];
    w.ph = pads[0];
    w.pw = pads[1];
    return w;
  }

  /// The dimensions of a parameter: its initializer's, or its graph input's declared shape.
  std::vector<std::int64_t> paramDims(int index, const onnx::NodeProto& n, int slot) const {
    const std::string& name = n.input(slot);
    if (auto it = m_constants.find(name); it != m_constants.end())
      return {it->second->dims().begin(), it->second->dims().end()};
    auto t = m_types.find(name);
    if (t != m_types.end() && t->second->has_tensor_type() &&
        t->second->tensor_type().has_shape()) {
      std::vector<std::int64_t> dims;
      for (const auto& d : t->second->tensor_type().shape().dim()) {
        if (!d.has_dim_value()) break;
        dims.push_back(d.dim_value());
      }
      if (static_cast<int>(dims.size()) == t->second->tensor_type().shape().dim_size()) return dims;
    }
    refuse(index, n, "its parameter '" + name + "' has no fixed shape");
  }

  // --- nodes ----------------------------------------------------------------------------------
  void mapNode(int index, const onnx::NodeProto& n) {
    const std::string& op = n.op_type();
    if (op == "Constant") return;
    if (op == "Cast" && constantInput(n, 0)) return foldCast(index, n);
    if (op == "Identity") {
      produce(index, n, dataInput(index, n, n.input(0)));
      return;
    }
    if (op == "Pad") return mapPad(index, n);
    if (op == "Conv") return mapConv(index, n);
    if (op == "BatchNormalization") return mapBatchNorm(index, n);
    if (op == "Gemm") return mapGemm(index, n);
    if (op == "MaxPool" || op == "AveragePool") return mapPool(index, n);
    if (op == "GlobalAveragePool") {
      return push(index, n, LayerKind::AdaptiveAvgPool2d, {dataInput(index, n, n.input(0))},
                  AdaptivePoolAttrs{1, 1});
    }
    if (op == "ReduceMean") return mapReduceMean(index, n);
    if (op == "Relu") return unary(index, n, LayerKind::ReLU, NoAttrs{});
    if (op == "Sigmoid") return unary(index, n, LayerKind::Sigmoid, NoAttrs{});
    if (op == "HardSwish") return unary(index, n, LayerKind::HardSwish, NoAttrs{});
    if (op == "HardSigmoid") {
      return unary(index, n, LayerKind::HardSigmoid,
                   HardSigmoidAttrs{floatAttr(n, "alpha", 0.2), floatAttr(n, "beta", 0.5)});
    }
    if (op == "Clip") return mapClip(index, n);
    if (op == "Dropout") return mapDropout(index, n);
    if (op == "Flatten") {
      if (intAttr(n, "axis", 1) != 1) refuse(index, n, "only Flatten with axis 1 maps");
      return unary(index, n, LayerKind::Flatten, NoAttrs{});
    }
    if (op == "Add" || op == "Mul") {
      return push(index, n, op == "Add" ? LayerKind::Add : LayerKind::Mul,
                  {dataInput(index, n, n.input(0)), dataInput(index, n, n.input(1))}, NoAttrs{});
    }
    if (op == "Concat") {
      if (intAttr(n, "axis", 0) != 1) refuse(index, n, "only Concat along axis 1 maps");
      if (n.input_size() == 1) {  // DenseNet's first layer concatenates one tensor: its input
        produce(index, n, dataInput(index, n, n.input(0)));
        return;
      }
      std::vector<std::string> ins;
      for (const auto& in : n.input())
        ins.push_back(dataInput(index, n, in));
      return push(index, n, LayerKind::Concat, std::move(ins), NoAttrs{});
    }
    unsupported(index, n);
  }

  /// A Cast of a constant to fp32 (PyTorch casts torch.clamp's bounds): a constant too.
  void foldCast(int index, const onnx::NodeProto& n) {
    const onnx::TensorProto& in = *constantInput(n, 0);
    if (intAttr(n, "to", 0) != onnx::TensorProto::FLOAT) {
      refuse(index, n, "only a Cast of a constant to fp32 folds");
    }
    const std::string what = m_path + ": " + where(index, n) + ": its input";
    std::vector<float> v;
    if (in.data_type() == onnx::TensorProto::FLOAT) {
      v = floatValues(in, what);
    } else if (in.data_type() == onnx::TensorProto::DOUBLE && in.double_data_size() > 0) {
      v.assign(in.double_data().begin(), in.double_data().end());
    } else if (in.data_type() == onnx::TensorProto::DOUBLE && in.has_raw_data()) {
      std::vector<double> d(in.raw_data().size() / 8);
      std::memcpy(d.data(), in.raw_data().data(), d.size() * 8);
      v.assign(d.begin(), d.end());
    } else {
      for (std::int64_t x : intValues(in, what))
        v.push_back(static_cast<float>(x));
    }
    onnx::TensorProto& t = m_folded.emplace_back();
    t.set_name(n.output(0));
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.mutable_dims()->CopyFrom(in.dims());
    for (float x : v)
      t.add_float_data(x);
    m_constants[n.output(0)] = &t;
  }

  void unary(int index, const onnx::NodeProto& n, LayerKind kind, LayerAttrs attrs) {
    push(index, n, kind, {dataInput(index, n, n.input(0))}, std::move(attrs));
  }

  void mapPad(int index, const onnx::NodeProto& n) {
    const std::string mode = stringAttr(n, "mode");
    if (!mode.empty() && mode != "constant") refuse(index, n, "only constant Pad folds");
    std::vector<std::int64_t> pads;
    if (const auto* t = constantInput(n, 1)) {
      pads = intValues(*t, m_path + ": " + where(index, n) + ": its pads");
    } else if (n.input_size() > 1) {
      refuse(index, n, "its pads are not a constant");
    } else {
      pads = intsAttr(n, "pads", {});
    }
    if (n.input_size() > 2 && !n.input(2).empty() && scalar(index, n, 2, "value") != 0.0) {
      refuse(index, n, "only a zero Pad folds");
    }
    if (const auto* value = attr(n, "value"); value && value->f() != 0.0f) {  // opset < 11
      refuse(index, n,
             "only a zero Pad folds (its value attribute is " + std::to_string(value->f()) + ")");
    }
    if (pads.size() != 8 || pads[0] || pads[1] || pads[4] || pads[5]) {
      refuse(index, n, "only a Pad of H and W of a [N,C,H,W] tensor folds");
    }
    if (*std::min_element(pads.begin(), pads.end()) < 0) refuse(index, n, "negative pads");
    if (*std::max_element(pads.begin(), pads.end()) == 0) {  // pads nothing: its input
      produce(index, n, dataInput(index, n, n.input(0)));
      return;
    }
    m_pads[n.output(0)] = {dataInput(index, n, n.input(0)), pads[2], pads[3], pads[6], pads[7]};
  }

  void mapConv(int index, const onnx::NodeProto& n) {
    const auto wdims = paramDims(index, n, 1);
    if (wdims.size() != 4) refuse(index, n, "only 2-d convolutions map");
    const Window w = window(index, n, intsAttr(n, "kernel_shape", {wdims[2], wdims[3]}), true);
    Conv2dAttrs a;
    a.out_channels = wdims[0];
    a.kernel_h = w.kh;
    a.kernel_w = w.kw;
    a.stride_h = w.sh;
    a.stride_w = w.sw;
    a.pad_h = w.ph;
    a.pad_w = w.pw;
    a.groups = intAttr(n, "group", 1);
    a.bias = n.input_size() > 2 && !n.input(2).empty();
    ParamRefs p;
    p.weights = {n.input(1)};
    if (a.bias) p.weights.push_back(n.input(2));
    push(index, n, LayerKind::Conv2d, {w.source}, a, p);
  }

  void mapBatchNorm(int index, const onnx::NodeProto& n) {
    BatchNormAttrs a;
    const double eps = floatAttr(n, "epsilon", 1e-5);
    const double momentum = floatAttr(n, "momentum", 0.9);
    // Checked here, as the file holds them: the network's fields hold them converted.
    if (!(momentum >= 0 && momentum <= 1)) {
      refuse(index, n,
             "its momentum is " + numberText(momentum) +
                 ", not a weight from 0 to 1 of the running statistics");
    }
    if (!(eps > 0) || !std::isfinite(eps)) {
      refuse(index, n, "its epsilon is " + numberText(eps) + "; Swapscope needs one above 0");
    }
    // ONNX keeps momentum of the running statistics (0.9); PyTorch the new value's (0.1). The
    // fp32 attributes are read to 6 and 12 decimals, so that 0.9f maps onto 0.1 and 1e-5f onto
    // 1e-5, as PyTorch wrote them.
    a.momentum = std::round((1.0 - momentum) * 1e6) / 1e6;
    a.eps = std::round(eps * 1e12) / 1e12;
    if (!(a.eps > 0)) {
      refuse(index, n,
             "its epsilon is " + numberText(eps) + ", which the network's 12 decimals round to 0");
    }
    ParamRefs p;
    p.weights = {n.input(1), n.input(2)};
    p.stats = {n.input(3), n.input(4)};
    push(index, n, LayerKind::BatchNorm2d, {dataInput(index, n, n.input(0))}, a, p);
  }

  void mapGemm(int index, const onnx::NodeProto& n) {
    if (floatAttr(n, "alpha", 1.0) != 1.0 || floatAttr(n, "beta", 1.0) != 1.0 ||
        intAttr(n, "transA", 0) != 0) {
      refuse(index, n, "only Gemm with alpha 1, beta 1 and transA 0 maps (a linear layer)");
    }
    const bool transB = intAttr(n, "transB", 0) != 0;
    const auto bdims = paramDims(index, n, 1);
    if (bdims.size() != 2) refuse(index, n, "its B is not a matrix");
    LinearAttrs a;
    a.out_features = transB ? bdims[0] : bdims[1];
    a.in_features = transB ? bdims[1] : bdims[0];
    a.bias = n.input_size() > 2 && !n.input(2).empty();
    if (a.bias) {
      const auto cdims = paramDims(index, n, 2);
      if (cdims.size() != 1 || cdims[0] != a.out_features) {
        refuse(index, n, "its C is not a bias of " + std::to_string(a.out_features) + " values");
      }
    }
    ParamRefs p;
    p.weights = {n.input(1)};
    if (a.bias) p.weights.push_back(n.input(2));
    p.transpose = !transB;
    push(index, n, LayerKind::Linear, {dataInput(index, n, n.input(0))}, a, p);
  }

  void mapPool(int index, const onnx::NodeProto& n) {
    const bool max = n.op_type() == "MaxPool";
    if (max && intAttr(n, "storage_order", 0) != 0) refuse(index, n, "storage_order 1");
    const bool includePad = !max && intAttr(n, "count_include_pad", 0) != 0;
    // A Pad's zeros count in the average whatever count_include_pad says: they fold where the
    // pooling counts its own padding too, or has none.
    const auto ownPads = intsAttr(n, "pads", {0, 0, 0, 0});
    const bool noOwnPads = std::all_of(ownPads.begin(), ownPads.end(), [](auto p) { return !p; });
    const Window w =
        window(index, n, intsAttr(n, "kernel_shape", {}), !max && (includePad || noOwnPads));
    PoolAttrs a;
    a.kernel_h = w.kh;
    a.kernel_w = w.kw;
    a.stride_h = w.sh;
    a.stride_w = w.sw;
    a.pad_h = w.ph;
    a.pad_w = w.pw;
    a.ceil_mode = intAttr(n, "ceil_mode", 0) != 0;
    a.count_include_pad = max || includePad || w.foldedPad;
    push(index, n, max ? LayerKind::MaxPool2d : LayerKind::AvgPool2d, {w.source}, a);
  }

  void mapReduceMean(int index, const onnx::NodeProto& n) {
    auto axes = intsAttr(n, "axes", {});
    for (auto& a : axes)
      if (a < 0) a += 4;
    std::sort(axes.begin(), axes.end());
    if (axes != std::vector<std::int64_t>{2, 3}) {
      refuse(index, n, "only ReduceMean over H and W (axes 2 and 3) maps");
    }
    if (intAttr(n, "keepdims", 1) != 0) {
      return unary(index, n, LayerKind::AdaptiveAvgPool2d, AdaptivePoolAttrs{1, 1});
    }
    // keepdims = 0: the mean, then its [C,1,1] flattened to [C], one layer each.
    const std::string pool = nodeName(index, n) + ".mean";
    m_names.insert(pool);
    m_layers.push_back({pool,
                        LayerKind::AdaptiveAvgPool2d,
                        {dataInput(index, n, n.input(0))},
                        AdaptivePoolAttrs{1, 1}});
    push(index, n, LayerKind::Flatten, {pool}, NoAttrs{});
  }

  void mapClip(int index, const onnx::NodeProto& n) {
    ClipAttrs a;
    if (n.input_size() > 1 || attr(n, "min") == nullptr) {  // opset 11+: bounds are inputs
      if (n.input_size() > 1 && !n.input(1).empty()) a.min = scalar(index, n, 1, "min");
      if (n.input_size() > 2 && !n.input(2).empty()) a.max = scalar(index, n, 2, "max");
    }
    if (const auto* m = attr(n, "min")) a.min = static_cast<double>(m->f());
    if (const auto* m = attr(n, "max")) a.max = static_cast<double>(m->f());
    unary(index, n, LayerKind::Clip, a);
  }

  void mapDropout(int index, const onnx::NodeProto& n) {
    double p = floatAttr(n, "ratio", 0.5);
    if (n.input_size() > 1 && !n.input(1).empty()) p = scalar(index, n, 1, "ratio");
    if (!(p >= 0 && p < 1)) {
      refuse(index, n, "its ratio is " + numberText(p) + ", not a probability from 0 to below 1");
    }
    // The ratio is an fp32 value: read to 6 decimals, 0.2f maps onto 0.2.
    const double ratio = std::round(p * 1e6) / 1e6;
    if (ratio >= 1) {
      refuse(index, n,
             "its ratio is " + numberText(p) + ", which the network's 6 decimals round to 1");
    }
    unary(index, n, LayerKind::Dropout, DropoutAttrs{ratio});
  }

  void addLoss() {
    if (m_graph.output_size() != 1) {
      throwBadInput(m_path + ": the graph has " + std::to_string(m_graph.output_size()) +
                    " outputs; a classifier has one (the logits)");
    }
    const std::string& out = m_graph.output(0).name();
    auto it = m_layerOf.find(out);
    if (it == m_layerOf.end()) {
      throwBadInput(m_path + ": the graph output '" + out + "' is not produced by a mapped node");
    }
    std::string name = "loss";
    while (m_names.count(name))
      name += "_";
    m_layers.push_back({name, LayerKind::SoftmaxCrossEntropy, {it->second}, NoAttrs{}});
  }

  /// The dimensions of each convolution's and batch norm's parameters must be those of the layer
  /// they map onto (its input's channels, its kernel): a file whose weights disagree with its
  /// attributes, or an --input with other channels than the weights', is refused, never
  /// imported with other parameters than the file holds.
  void checkParameters(const Network& net) const {
    for (int i = 0; i < net.size(); ++i) {
      const Layer& layer = net.layer(i);
      const auto node = m_nodeOf.find(layer.name);
      if (node == m_nodeOf.end()) continue;
      const onnx::NodeProto& n = m_graph.node(node->second);
      const std::int64_t channels = net.inputShape(i).dims.at(0);
      const auto expect = [&](int slot, const std::vector<std::int64_t>& want,
                              const std::string& why) {
        const std::vector<std::int64_t> dims = paramDims(node->second, n, slot);
        if (dims != want) {
          refuse(node->second, n,
                 "its parameter '" + n.input(slot) + "' is " + listOf(dims) + ", but " + why +
                     " needs " + listOf(want));
        }
      };
      if (layer.kind == LayerKind::Conv2d) {
        const auto& a = layer.as<Conv2dAttrs>();
        const std::string what =
            "a convolution of " + std::to_string(channels) + " input channels in " +
            std::to_string(a.groups) + (a.groups == 1 ? " group" : " groups") + " with a " +
            std::to_string(a.kernel_h) + "x" + std::to_string(a.kernel_w) + " kernel";
        expect(1, {a.out_channels, channels / a.groups, a.kernel_h, a.kernel_w}, what);
        if (a.bias)
          expect(2, {a.out_channels},
                 "a bias of " + std::to_string(a.out_channels) + " output channels");
      } else if (layer.kind == LayerKind::BatchNorm2d) {
        for (int slot = 1; slot <= 4; ++slot)
          expect(slot, {channels}, "a batch norm of " + std::to_string(channels) + " channels");
      }
    }
  }

  /// Each mapped layer's shape must be what ONNX's shape inference found for its node's output:
  /// a mapping that disagrees with ONNX is a bug, never a silent difference.
  void checkShapes(const Network& net) const {
    for (int i = 0; i < net.size(); ++i) {
      auto node = m_nodeOf.find(net.layer(i).name);
      if (node == m_nodeOf.end()) continue;
      const auto& n = m_graph.node(node->second);
      auto t = m_types.find(n.output(0));
      if (t == m_types.end() || !t->second->has_tensor_type() ||
          !t->second->tensor_type().has_shape())
        continue;
      const auto& dims = t->second->tensor_type().shape().dim();
      Shape onnxShape;
      bool known = true;
      for (int d = 1; d < dims.size(); ++d) {
        known = known && dims[d].has_dim_value();
        onnxShape.dims.push_back(dims[d].dim_value());
      }
      if (known && !(onnxShape == net.outputShape(i))) {
        throwBadInput(m_path + ": " + where(node->second, n) + ": maps onto a layer of shape " +
                      net.outputShape(i).toString() + " where ONNX's shape inference gives " +
                      onnxShape.toString());
      }
    }
  }

  // --- initial weights ------------------------------------------------------------------------
  void readWeights(OnnxModel& out) const {
    int present = 0, absent = 0;
    for (const auto& [layer, refs] : m_params) {
      for (const auto& names : {refs.weights, refs.stats})
        for (const auto& name : names)
          ++(m_constants.count(name) ? present : absent);
    }
    if (present == 0) return;
    if (absent > 0) {
      throwBadInput(m_path + ": it holds " + std::to_string(present) + " of its " +
                    std::to_string(present + absent) +
                    " parameter tensors as initializers; import needs all of them or none");
    }
    const Network& net = out.net;
    for (int i = 0; i < net.size(); ++i) {
      auto it = m_params.find(net.layer(i).name);
      if (it == m_params.end() || it->second.weights.empty()) continue;
      const ParamRefs& refs = it->second;
      std::vector<float> w;
      for (std::size_t j = 0; j < refs.weights.size(); ++j) {
        const onnx::TensorProto& t = *m_constants.at(refs.weights[j]);
        std::vector<float> v = checkedValues(t);
        if (j == 0 && refs.transpose) v = transposed(v, t.dims(0), t.dims(1));
        w.insert(w.end(), v.begin(), v.end());
      }
      out.weights.push_back(std::move(w));
      if (refs.stats.empty()) continue;
      std::vector<float> s;
      for (std::size_t j = 0; j < refs.stats.size(); ++j) {
        // Batch norm's inputs 3 and 4: the running mean, then the running variance.
        const auto v = checkedValues(*m_constants.at(refs.stats[j]), j == 1);
        s.insert(s.end(), v.begin(), v.end());
      }
      out.running_stats.push_back(std::move(s));
    }
  }
  /// An initializer's fp32 values, refused where they cannot be weights (NaN, infinities, or
  /// a negative value of a running variance).
  std::vector<float> checkedValues(const onnx::TensorProto& t, bool variances = false) const {
    const std::string what = m_path + ": initializer '" + t.name() + "'";
    std::vector<float> v = floatValues(t, what);
    if (const std::string why = badTensorValues(v, variances ? 0 : v.size()); !why.empty())
      throwBadInput(what + " " + why);
    return v;
  }
  /// [rows, cols] to [cols, rows]: Gemm's B without transB is [in, out]; the kernels hold
  /// [out, in].
  static std::vector<float> transposed(const std::vector<float>& v, std::int64_t rows,
                                       std::int64_t cols) {
    std::vector<float> t(v.size());
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        t[static_cast<std::size_t>(c * rows + r)] = v[static_cast<std::size_t>(r * cols + c)];
    return t;
  }

  const std::string& m_path;
  const onnx::ModelProto& m_model;
  const onnx::GraphProto& m_graph;
  OnnxImportOptions m_options;
  std::string m_inputName;

  std::unordered_map<std::string, const onnx::TensorProto*> m_constants;
  std::unordered_map<std::string, int> m_producer;  ///< value -> node index
  std::unordered_map<std::string, int> m_readers;   ///< value -> how many nodes read it
  std::unordered_map<std::string, const onnx::TypeProto*> m_types;
  std::unordered_map<std::string, std::string> m_layerOf;  ///< data value -> layer name
  std::unordered_map<std::string, PendingPad> m_pads;
  std::map<std::string, ParamRefs> m_params;      ///< layer name -> its parameters
  std::unordered_map<std::string, int> m_nodeOf;  ///< layer name -> node index
  std::set<std::string> m_names;
  std::vector<Layer> m_layers;
  std::deque<onnx::TensorProto> m_folded;  ///< constants the import computed (stable addresses)
};

}  // namespace

std::string supportedOnnxOperators() {
  std::string s;
  for (const char* op : kSupported)
    s += (s.empty() ? "" : ", ") + std::string(op);
  return s;
}

OnnxModel importOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  onnx::ModelProto model = onnx_detail::parseModel(path);
  try {
    Importer importer(path, model, options);
    importer.checkBeforeInference();
    onnx_detail::inferShapes(model, path);  // adds the graph's value_info, which run() reads
    return importer.run();
  } catch (const Error& e) {
    // Network::build's messages name layers; say which file they come from.
    if (std::string(e.what()).rfind(path, 0) == 0) throw;
    throw Error(e.kind(), path + ": " + e.what());
  }
}

}  // namespace swapscope
