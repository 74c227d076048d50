// SPDX-License-Identifier: MIT
// The ONNX importer on torchvision models exported by scripts/export_onnx.py: every model maps,
// with PyTorch's parameter count and the script's forward MACs; the four the zoo also has give
// the zoo's per-layer costs; channel shuffle is refused naming its node; bad files name the file
// and the culprit.
#include "importer/onnx_import.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include <unistd.h>

#include <onnx/onnx_pb.h>
#include <nlohmann/json.hpp>

#include "analysis/layer_cost.h"
#include "common/error.h"
#include "graph/network_json.h"
#include "graph/zoo.h"

namespace swapscope {
namespace {

const std::string kDir = std::string(SWAPSCOPE_TEST_DATA_DIR) + "/onnx/";

nlohmann::json modelsRecord() {
  std::ifstream f(kDir + "models.json");
  return nlohmann::json::parse(f);
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

class TorchvisionModel : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchvisionModel, HasPyTorchsParametersAndTheScriptsMacs) {
  const auto rec = modelsRecord().at(GetParam());
  const OnnxModel m = importOnnxFile(kDir + GetParam() + ".onnx");
  EXPECT_FALSE(m.hasWeights()) << "exported with export_params=False";
  EXPECT_EQ(m.net.name(), GetParam()) << "named after the file";
  EXPECT_EQ(m.net.sampleShape(), Shape{rec.at("input").get<std::vector<std::int64_t>>()});
  EXPECT_EQ(m.net.classes(), 1000);
  const CostTotals t = sumCosts(computeLayerCosts(m.net));
  EXPECT_EQ(t.params, rec.at("params").get<std::int64_t>());
  EXPECT_EQ(t.fwd_macs, rec.at("macs").get<std::int64_t>());
}

TEST_P(TorchvisionModel, ReadsBackFromItsNetworkJson) {
  const OnnxModel m = importOnnxFile(kDir + GetParam() + ".onnx");
  const Network back = networkFromText(networkToText(m.net), "memory");
  EXPECT_EQ(back, m.net);
  EXPECT_EQ(back.structureHash(), m.net.structureHash());
}

INSTANTIATE_TEST_SUITE_P(Onnx, TorchvisionModel,
                         ::testing::Values("alexnet", "vgg16", "resnet50", "googlenet",
                                           "densenet121", "squeezenet1_0", "mobilenet_v2",
                                           "mobilenet_v3_small", "efficientnet_b0"));

/// The zoo's costs, layer by layer in topological order, against the imported network's. The
/// import keeps the exported graph's ReLU after every layer PyTorch wrote one for, as the zoo.
class ZooEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooEquivalence, PerLayerFlopsFeatureMapsAndParametersEqualTheZoos) {
  const Network zoo = buildZooModel(GetParam());
  const Network imported = importOnnxFile(kDir + GetParam() + ".onnx").net;
  const auto a = computeLayerCosts(zoo);
  const auto b = computeLayerCosts(imported);
  ASSERT_EQ(zoo.size(), imported.size());
  for (int i = 0; i < zoo.size(); ++i) {
    SCOPED_TRACE("zoo layer '" + zoo.layer(i).name + "', imported '" + imported.layer(i).name +
                 "'");
    EXPECT_EQ(a[i].fwd_flops, b[i].fwd_flops);
    EXPECT_EQ(a[i].bwd_data_flops, b[i].bwd_data_flops);
    EXPECT_EQ(a[i].bwd_weight_flops, b[i].bwd_weight_flops);
    EXPECT_EQ(a[i].fm, b[i].fm);
    EXPECT_EQ(a[i].params, b[i].params);
  }
}

INSTANTIATE_TEST_SUITE_P(Onnx, ZooEquivalence,
                         ::testing::Values("alexnet", "vgg16", "resnet50", "googlenet"));

TEST(OnnxImport, LayersAreNamedAfterTheNodes) {
  const Network net = importOnnxFile(kDir + "resnet50.onnx").net;
  EXPECT_EQ(net.layer(0).name, "input");
  EXPECT_EQ(net.layer(1).name, "/conv1/Conv");
  EXPECT_GE(net.indexOf("/layer4/layer4.2/Add"), 0);
  EXPECT_EQ(net.layer(net.lossLayer()).name, "loss");
}

TEST(OnnxImport, TheInputOptionReplacesTheGraphInputsSampleShape) {
  OnnxImportOptions o;
  o.input = Shape{{3, 64, 64}};
  const Network net = importOnnxFile(kDir + "mobilenet_v2.onnx", o).net;
  EXPECT_EQ(net.sampleShape(), (Shape{{3, 64, 64}}));
  EXPECT_EQ(net.outputShape(1), (Shape{{32, 32, 32}}));
}

TEST(OnnxImport, ShuffleNetsChannelShuffleIsRefusedNamingTheNodeAndTheSupportedOperators) {
  const std::string msg = errorOf([] { importOnnxFile(kDir + "shufflenet_v2_x1_0.onnx"); });
  EXPECT_NE(msg.find("shufflenet_v2_x1_0.onnx: node #"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not map onto a Swapscope layer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("supported: Add, AveragePool"), std::string::npos) << msg;
  EXPECT_NE(msg.find("reading '"), std::string::npos) << msg;
}

// --- bad files ---------------------------------------------------------------------------------

class BadOnnxFile : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("swapscope-onnx-" + std::to_string(::getpid()) + "-" + name))
                                 .string();
    std::ofstream(path, std::ios::binary) << bytes;
    m_files.push_back(path);
    return path;
  }
  static std::string bytesOf(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
  }
  static onnx::ModelProto alexnet() {
    onnx::ModelProto m;
    EXPECT_TRUE(m.ParseFromString(bytesOf(kDir + "alexnet.onnx")));
    return m;
  }
  void TearDown() override {
    for (const auto& f : m_files)
      std::filesystem::remove(f);
  }
  std::vector<std::string> m_files;
};

TEST_F(BadOnnxFile, NotOnnxIsRefusedNamingTheFile) {
  const std::string path = write("text.onnx", "{\"format\": \"swapscope-network\"}\n");
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find(path + ": not an ONNX model"), std::string::npos) << msg;
}

TEST_F(BadOnnxFile, ATruncatedFileIsRefused) {
  const std::string all = bytesOf(kDir + "alexnet.onnx");
  const std::string path = write("cut.onnx", all.substr(0, all.size() / 2));
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find(path + ": not an ONNX model, or cut short"), std::string::npos) << msg;
}

TEST_F(BadOnnxFile, ACheckerFailureIsRefusedWithTheCheckersReason) {
  onnx::ModelProto m = alexnet();
  m.mutable_graph()->mutable_node(0)->set_input(0, "no_such_value");
  const std::string path = write("unchecked.onnx", m.SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find(path + ": the ONNX checker refuses it"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no_such_value"), std::string::npos) << msg;
}

TEST_F(BadOnnxFile, AnInputWithoutAShapeIsRefusedUnlessTheInputOptionGivesIt) {
  // The checker requires a shape field; a per-sample dimension without a size is the missing
  // shape (the batch dimension may be symbolic).
  onnx::ModelProto m = alexnet();
  auto* dims =
      m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(2)->set_dim_param("height");
  const std::string path = write("shapeless.onnx", m.SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find(path + ": graph input 'input': dimension 2 has no fixed size; give the "
                            "per-sample shape with --input CxHxW"),
            std::string::npos)
      << msg;
  OnnxImportOptions o;
  o.input = Shape{{3, 224, 224}};
  EXPECT_EQ(importOnnxFile(path, o).net.sampleShape(), (Shape{{3, 224, 224}}));
}

TEST_F(BadOnnxFile, TwoDataInputsAreRefusedNamingBoth) {
  onnx::ModelProto m = alexnet();
  *m.mutable_graph()->add_input() = m.graph().input(0);
  m.mutable_graph()->mutable_input(m.graph().input_size() - 1)->set_name("second");
  const std::string path = write("two.onnx", m.SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find(path + ": the graph has 2 data inputs ('input' and 'second')"),
            std::string::npos)
      << msg;
}

TEST_F(BadOnnxFile, AnUnsupportedOperatorIsRefusedNamingNodeOpAndPlace) {
  onnx::ModelProto m = alexnet();
  auto* node = m.mutable_graph()->mutable_node(1);  // the first Relu
  ASSERT_EQ(node->op_type(), "Relu");
  node->set_op_type("Tanh");
  const std::string path = write("tanh.onnx", m.SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find(path + ": node #1 '" + node->name() + "' (Tanh), reading '"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("operator Tanh does not map onto a Swapscope layer (supported: "),
            std::string::npos)
      << msg;
}

/// The first node of `m` of operator `op`.
onnx::NodeProto* firstNode(onnx::ModelProto& m, const std::string& op) {
  for (auto& n : *m.mutable_graph()->mutable_node())
    if (n.op_type() == op) return &n;
  ADD_FAILURE() << "no " << op << " node";
  return nullptr;
}

void setInts(onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> v) {
  for (auto& a : *n.mutable_attribute()) {
    if (a.name() != name) continue;
    a.clear_ints();
    for (std::int64_t x : v)
      a.add_ints(x);
    return;
  }
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (std::int64_t x : v)
    a->add_ints(x);
}

void setFloat(onnx::NodeProto& n, const std::string& name, float v) {
  for (auto& a : *n.mutable_attribute()) {
    if (a.name() == name) {
      a.set_f(v);
      return;
    }
  }
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

// Attributes are checked as the file holds them, naming the node: batch norm's momentum was
// reported converted ("field 'momentum' ... got -1.0" for a momentum of 2), a NaN as "null".
TEST_F(BadOnnxFile, AttributesOutOfTheirRangeAreNamedAsTheFileHoldsThem) {
  const auto refusalWith = [&](const std::string& op, const char* attribute, float value) {
    onnx::ModelProto m;
    EXPECT_TRUE(m.ParseFromString(bytesOf(kDir + "small_cnn.onnx")));
    onnx::NodeProto* n = firstNode(m, op);
    if (!n) return std::string();
    setFloat(*n, attribute, value);
    const std::string path = write("attribute.onnx", m.SerializeAsString());
    return errorOf([&] { importOnnxFile(path); });
  };
  std::string msg = refusalWith("BatchNormalization", "momentum", 2.0f);
  EXPECT_NE(msg.find("its momentum is 2, not a weight from 0 to 1 of the running statistics"),
            std::string::npos)
      << msg;
  msg = refusalWith("BatchNormalization", "momentum", std::numeric_limits<float>::quiet_NaN());
  EXPECT_NE(msg.find("its momentum is NaN, not a weight"), std::string::npos) << msg;
  msg = refusalWith("BatchNormalization", "epsilon", 0.0f);
  EXPECT_NE(msg.find("its epsilon is 0; Swapscope needs one above 0"), std::string::npos) << msg;
  // Above 0 as the file holds it, 0 as the network holds it.
  msg = refusalWith("BatchNormalization", "epsilon", 1e-13f);
  EXPECT_NE(msg.find("its epsilon is 1e-13, which the network's 12 decimals round to 0"),
            std::string::npos)
      << msg;
}

// A Dropout ratio of NaN (an input constant since opset 12) was reported as "got null".
TEST_F(BadOnnxFile, ADropoutRatioOfNaNIsNamedAsNaN) {
  onnx::ModelProto m = alexnet();
  onnx::NodeProto* dropout = firstNode(m, "Dropout");
  ASSERT_NE(dropout, nullptr);
  ASSERT_GT(dropout->input_size(), 1);
  const std::string ratio = dropout->input(1);
  onnx::TensorProto* value = nullptr;
  for (auto& t : *m.mutable_graph()->mutable_initializer())
    if (t.name() == ratio) value = &t;
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    if (n.op_type() != "Constant" || n.output(0) != ratio) continue;
    for (auto& a : *n.mutable_attribute())
      if (a.name() == "value") value = a.mutable_t();
  }
  ASSERT_NE(value, nullptr) << "no constant " << ratio;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (value->has_raw_data()) {
    value->set_raw_data(std::string(reinterpret_cast<const char*>(&nan), sizeof nan));
  } else {
    value->clear_float_data();
    value->add_float_data(nan);
  }
  const std::string path = write("dropout-nan.onnx", m.SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find("its ratio is NaN, not a probability from 0 to below 1"), std::string::npos)
      << msg;
}

// VALID is no padding, and ONNX forbids pads beside it: the two gave a shape ONNX Runtime would
// not (Swapscope applied the pads).
TEST_F(BadOnnxFile, AutoPadValidWithPadsIsRefused) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytesOf(kDir + "small_cnn.onnx")));
  onnx::NodeProto* conv = firstNode(m, "Conv");
  ASSERT_NE(conv, nullptr);
  setInts(*conv, "pads", {1, 1, 1, 1});
  auto* a = conv->add_attribute();
  a->set_name("auto_pad");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("VALID");
  const std::string path = write("valid-pads.onnx", m.SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find("it has auto_pad VALID (no padding) and pads too, which ONNX forbids"),
            std::string::npos)
      << msg;
}

// An operator set newer than the ONNX library's passed its checker, and was read as if it were
// one the importer knows.
TEST_F(BadOnnxFile, AnOperatorSetNewerThanTheLibrarysIsRefused) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytesOf(kDir + "small_cnn.onnx")));
  ASSERT_GT(m.opset_import_size(), 0);
  m.mutable_opset_import(0)->set_version(99);
  const std::string path = write("opset99.onnx", m.SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find("it imports operator set 99 of the default ONNX domain, newer than the "),
            std::string::npos)
      << msg;
}

TEST_F(BadOnnxFile, AWindowOfStrideZeroIsRefusedNamingTheNodeNotDividedBy) {
  // ONNX's shape inference divides by the strides that its checker lets through: a stride of 0
  // is refused before it runs, naming the node (not a floating-point exception).
  for (const char* op : {"Conv", "MaxPool"}) {
    for (const char* attribute : {"strides", "kernel_shape", "dilations"}) {
      onnx::ModelProto m = alexnet();
      onnx::NodeProto* n = firstNode(m, op);
      ASSERT_NE(n, nullptr);
      setInts(*n, attribute, {0, 0});
      const std::string path = write("zero.onnx", m.SerializeAsString());
      const std::string msg = errorOf([&] { importOnnxFile(path); });
      EXPECT_NE(msg.find(path + ": node #"), std::string::npos) << msg;
      EXPECT_NE(msg.find("(" + std::string(op) + ")"), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::string(attribute) + " [0,0] must be positive"), std::string::npos)
          << msg;
    }
  }
}

TEST_F(BadOnnxFile, AnOperatorOfAnotherDomainIsRefusedNamingTheDomain) {
  onnx::ModelProto m = alexnet();
  onnx::NodeProto* relu = firstNode(m, "Relu");
  relu->set_domain("com.example");
  auto* opset = m.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  const std::string path = write("domain.onnx", m.SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find("operator Relu of domain 'com.example' does not map onto a Swapscope layer"),
            std::string::npos)
      << msg;
}

TEST_F(BadOnnxFile, ANameThatIsNotUtf8IsRefusedNamingTheNode) {
  onnx::ModelProto m = alexnet();
  m.mutable_graph()->mutable_node(1)->set_name("\xff\xfe");
  const std::string path = write("utf8.onnx", m.SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find(path + ": node #1 (Relu): its name is not valid UTF-8"), std::string::npos)
      << msg;
}

TEST_F(BadOnnxFile, ANodeNamedAfterTheGraphInputIsRenamedAsTwoNodesAre) {
  onnx::ModelProto m = alexnet();
  const std::string input = m.graph().input(0).name();
  m.mutable_graph()->mutable_node(0)->set_name(input);
  const std::string path = write("named.onnx", m.SerializeAsString());
  const Network net = importOnnxFile(path).net;
  EXPECT_EQ(net.layer(0).name, input);
  EXPECT_EQ(net.layer(1).name, input + "#0");
  EXPECT_EQ(net.structureHash(), importOnnxFile(kDir + "alexnet.onnx").net.structureHash());
}

/// The declared dimensions of graph input `name` of `m` (a parameter without export_params).
onnx::TensorShapeProto* declaredShape(onnx::ModelProto& m, const std::string& name) {
  for (auto& in : *m.mutable_graph()->mutable_input())
    if (in.name() == name) return in.mutable_type()->mutable_tensor_type()->mutable_shape();
  ADD_FAILURE() << "no graph input " << name;
  return nullptr;
}

TEST_F(BadOnnxFile, ConvolutionWeightsThatDisagreeWithTheLayerAreRefusedNamingBothShapes) {
  // alexnet's first weight is [64,3,11,11]; a file that declares [64,5,11,11] on a 3-channel
  // input is not the network its attributes describe.
  onnx::ModelProto m = alexnet();
  onnx::NodeProto* conv = firstNode(m, "Conv");
  const std::string weight = conv->input(1);
  declaredShape(m, weight)->mutable_dim(1)->set_dim_value(5);
  std::string path = write("cin.onnx", m.SerializeAsString());
  std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find("its parameter '" + weight +
                     "' is [64,5,11,11], but a convolution of 3 input channels in 1 group with "
                     "a 11x11 kernel needs [64,3,11,11]"),
            std::string::npos)
      << msg;
  // A kernel_shape other than the weight's.
  m = alexnet();
  setInts(*firstNode(m, "Conv"), "kernel_shape", {5, 5});
  path = write("kernel.onnx", m.SerializeAsString());
  msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find("is [64,3,11,11], but a convolution of 3 input channels in 1 group with a "
                     "5x5 kernel needs [64,3,5,5]"),
            std::string::npos)
      << msg;
  // An --input with other channels than the weights take.
  OnnxImportOptions gray;
  gray.input = Shape{{1, 224, 224}};
  msg = errorOf([&] { importOnnxFile(kDir + "alexnet.onnx", gray); });
  EXPECT_NE(msg.find("is [64,3,11,11], but a convolution of 1 input channels"), std::string::npos)
      << msg;
}

TEST_F(BadOnnxFile, BatchNormTensorsOfAnotherLengthAreRefused) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytesOf(kDir + "resnet50.onnx")));
  onnx::NodeProto* bn = firstNode(m, "BatchNormalization");
  ASSERT_NE(bn, nullptr);
  const std::string mean = bn->input(3);
  const std::int64_t channels = declaredShape(m, mean)->dim(0).dim_value();
  declaredShape(m, mean)->mutable_dim(0)->set_dim_value(channels + 3);
  const std::string path = write("bn.onnx", m.SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find("its parameter '" + mean + "' is [" + std::to_string(channels + 3) +
                     "], but a batch norm of " + std::to_string(channels) + " channels needs [" +
                     std::to_string(channels) + "]"),
            std::string::npos)
      << msg;
}

// Values that cannot be weights are refused as a weight file's are: a NaN or an infinity (which
// the loss blamed on the learning rate, or training carried on unseen behind a ReLU), and a
// negative running variance (which made inference's outputs NaN).
TEST_F(BadOnnxFile, AnInitializerHoldingNaNOrANegativeRunningVarianceIsRefused) {
  const auto initializer = [](onnx::ModelProto& m, const std::string& name) {
    for (onnx::TensorProto& t : *m.mutable_graph()->mutable_initializer())
      if (t.name() == name) return &t;
    return static_cast<onnx::TensorProto*>(nullptr);
  };
  const auto setValue = [](onnx::TensorProto& t, std::size_t i, float v) {
    ASSERT_GE(t.raw_data().size(), (i + 1) * sizeof v);
    std::memcpy(t.mutable_raw_data()->data() + i * sizeof v, &v, sizeof v);
  };
  {
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(bytesOf(kDir + "small_cnn.onnx")));
    onnx::TensorProto* w = initializer(m, firstNode(m, "Conv")->input(1));
    ASSERT_NE(w, nullptr);
    setValue(*w, 3, std::numeric_limits<float>::quiet_NaN());
    const std::string path = write("nan.onnx", m.SerializeAsString());
    const std::string msg = errorOf([&] { importOnnxFile(path); });
    EXPECT_NE(msg.find("initializer '" + w->name() + "' holds NaN at value 3 of " +
                       std::to_string(w->raw_data().size() / 4) +
                       " (weights and running statistics must be finite numbers)"),
              std::string::npos)
        << msg;
  }
  {
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(bytesOf(kDir + "small_cnn.onnx")));
    const onnx::NodeProto* bn = firstNode(m, "BatchNormalization");
    ASSERT_NE(bn, nullptr);
    onnx::TensorProto* var = initializer(m, bn->input(4));
    ASSERT_NE(var, nullptr);
    // A negative mean or scale is a value like any other; a negative variance is not.
    setValue(*initializer(m, bn->input(3)), 0, -1.0f);
    const std::string fine = write("negative-mean.onnx", m.SerializeAsString());
    EXPECT_NO_THROW(importOnnxFile(fine));
    setValue(*var, 1, -0.5f);
    const std::string path = write("negative-var.onnx", m.SerializeAsString());
    const std::string msg = errorOf([&] { importOnnxFile(path); });
    EXPECT_NE(msg.find("initializer '" + var->name() + "' holds -0.5 at value 1 of " +
                       std::to_string(var->raw_data().size() / 4) +
                       ", a running variance (a variance cannot be negative)"),
              std::string::npos)
        << msg;
  }
}

TEST_F(BadOnnxFile, AParameterKeptInAnExternalFileIsRefusedSayingSo) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytesOf(kDir + "small_cnn.onnx")));
  onnx::TensorProto& t = *m.mutable_graph()->mutable_initializer(0);
  // The values moved into a file beside the model, where the checker looks for them.
  const std::string bin =
      std::filesystem::path(write("weights.bin", t.raw_data())).filename().string();
  t.clear_raw_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = t.add_external_data();
  location->set_key("location");
  location->set_value(bin);
  const std::string path = write("external.onnx", m.SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find("initializer '" + t.name() + "': its values are in an external file ('" + bin +
                     "'), which Swapscope does not read"),
            std::string::npos)
      << msg;
}

// --- folds and layouts ------------------------------------------------------------------------

/// alexnet with its first convolution's padding of 2 moved into a Pad node of `pads` before it.
onnx::ModelProto alexnetWithPad(std::vector<std::int64_t> pads, std::int64_t convPad) {
  onnx::ModelProto m;
  std::ifstream f(kDir + "alexnet.onnx", std::ios::binary);
  EXPECT_TRUE(m.ParseFromString({std::istreambuf_iterator<char>(f), {}}));
  onnx::GraphProto& g = *m.mutable_graph();
  onnx::TensorProto& t = *g.add_initializer();
  t.set_name("pads");
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(8);
  for (std::int64_t p : pads)
    t.add_int64_data(p);
  onnx::NodeProto pad;
  pad.set_name("/pad");
  pad.set_op_type("Pad");
  pad.add_input("input");
  pad.add_input("pads");
  pad.add_output("padded");
  onnx::NodeProto& conv = *g.mutable_node(0);
  EXPECT_EQ(conv.op_type(), "Conv");
  conv.set_input(0, "padded");
  for (auto& a : *conv.mutable_attribute()) {
    if (a.name() == "pads") {
      for (int i = 0; i < 4; ++i)
        a.set_ints(i, convPad);
    }
  }
  // The Pad goes first: nodes are in topological order.
  auto* nodes = g.mutable_node();
  nodes->Add()->CopyFrom(pad);
  for (int i = nodes->size() - 1; i > 0; --i)
    nodes->SwapElements(i, i - 1);
  return m;
}

TEST_F(BadOnnxFile, AZeroPadFoldsIntoTheConvolutionThatReadsIt) {
  const Network original = importOnnxFile(kDir + "alexnet.onnx").net;
  const std::string path =
      write("pad.onnx", alexnetWithPad({0, 0, 1, 1, 0, 0, 1, 1}, 1).SerializeAsString());
  const Network folded = importOnnxFile(path).net;
  ASSERT_EQ(folded.size(), original.size());
  EXPECT_EQ(folded.layer(1).as<Conv2dAttrs>(), original.layer(1).as<Conv2dAttrs>());
  EXPECT_EQ(folded.layer(1).as<Conv2dAttrs>().pad_h, 2);
  EXPECT_EQ(folded.structureHash(), original.structureHash());
}

TEST_F(BadOnnxFile, AnUnevenPadIsRefusedAsAsymmetric) {
  const std::string path =
      write("uneven.onnx", alexnetWithPad({0, 0, 1, 0, 0, 0, 1, 1}, 1).SerializeAsString());
  const std::string msg = errorOf([&] { importOnnxFile(path); });
  EXPECT_NE(msg.find("asymmetric pads [2,1,2,2] (top, left, bottom, right) do not map"),
            std::string::npos)
      << msg;
}

TEST_F(BadOnnxFile, AnOpset10PadFoldsWhenZeroAndIsRefusedWithAValue) {
  // Before opset 11 a Pad's pads and value are attributes. alexnet's other operators read the
  // same at opset 10, but for Dropout, whose ratio is then an attribute (0.5 where absent, the
  // ratio alexnet's Dropout inputs give).
  for (const float value : {0.0f, 5.0f}) {
    onnx::ModelProto m = alexnetWithPad({0, 0, 1, 1, 0, 0, 1, 1}, 1);
    m.mutable_opset_import(0)->set_version(10);
    for (auto& n : *m.mutable_graph()->mutable_node()) {
      while (n.op_type() == "Dropout" && n.input_size() > 1)
        n.mutable_input()->RemoveLast();
    }
    onnx::NodeProto* pad = firstNode(m, "Pad");
    pad->mutable_input()->RemoveLast();  // the pads input: an attribute now
    setInts(*pad, "pads", {0, 0, 1, 1, 0, 0, 1, 1});
    auto* v = pad->add_attribute();
    v->set_name("value");
    v->set_type(onnx::AttributeProto::FLOAT);
    v->set_f(value);
    const std::string path = write("pad10.onnx", m.SerializeAsString());
    if (value == 0.0f) {
      EXPECT_EQ(importOnnxFile(path).net.structureHash(),
                importOnnxFile(kDir + "alexnet.onnx").net.structureHash());
    } else {
      const std::string msg = errorOf([&] { importOnnxFile(path); });
      EXPECT_NE(msg.find("(Pad)"), std::string::npos) << msg;
      EXPECT_NE(msg.find("only a zero Pad folds (its value attribute is 5"), std::string::npos)
          << msg;
    }
  }
}

TEST_F(BadOnnxFile, GemmWithoutTransBHasItsWeightsTransposedIntoTheLinearLayout) {
  const OnnxModel original = importOnnxFile(kDir + "small_cnn.onnx");
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytesOf(kDir + "small_cnn.onnx")));
  onnx::GraphProto& g = *m.mutable_graph();
  onnx::NodeProto* gemm = nullptr;
  for (auto& n : *g.mutable_node())
    if (n.op_type() == "Gemm") gemm = &n;
  ASSERT_NE(gemm, nullptr);
  for (auto& a : *gemm->mutable_attribute())
    if (a.name() == "transB") a.set_i(0);
  for (auto& t : *g.mutable_initializer()) {
    if (t.name() != gemm->input(1)) continue;
    // [out, in] -> [in, out]
    const std::int64_t out = t.dims(0), in = t.dims(1);
    std::vector<float> v(static_cast<std::size_t>(out * in));
    std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
    std::vector<float> tr(v.size());
    for (std::int64_t r = 0; r < out; ++r)
      for (std::int64_t c = 0; c < in; ++c)
        tr[static_cast<std::size_t>(c * out + r)] = v[static_cast<std::size_t>(r * in + c)];
    t.set_raw_data(tr.data(), tr.size() * sizeof(float));
    t.set_dims(0, in);
    t.set_dims(1, out);
  }
  const std::string path = write("transb0.onnx", m.SerializeAsString());
  const OnnxModel transposed = importOnnxFile(path);
  EXPECT_EQ(transposed.net.structureHash(), original.net.structureHash());
  ASSERT_TRUE(transposed.hasWeights());
  EXPECT_EQ(transposed.weights, original.weights);
  EXPECT_EQ(transposed.running_stats, original.running_stats);
}

}  // namespace
}  // namespace swapscope
