// SPDX-License-Identifier: MIT
#include "graph/network_json.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "graph/zoo.h"

namespace swapscope {
namespace {

using json = nlohmann::ordered_json;

class ZooRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooRoundTrip, WritesAndReadsBackIdentically) {
  const Network net = buildZooModel(GetParam());
  const std::string text = networkToText(net);
  const Network back = networkFromJson(json::parse(text));
  EXPECT_TRUE(back == net);
  EXPECT_EQ(networkToText(back), text);
  EXPECT_EQ(back.structureHash(), net.structureHash());
  for (int i = 0; i < net.size(); ++i)
    ASSERT_EQ(back.outputShape(i), net.outputShape(i));
}

INSTANTIATE_TEST_SUITE_P(EveryZooModel, ZooRoundTrip, ::testing::ValuesIn([] {
                           std::vector<std::string> names;
                           for (const ZooEntry& e : zooEntries())
                             names.push_back(e.name);
                           return names;
                         }()),
                         [](const auto& p) {
                           std::string n = p.param;
                           for (char& c : n)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

TEST(NetworkFile, RoundTripThroughAFile) {
  const Network net = buildZooModel("resnet20");
  const auto path = std::filesystem::temp_directory_path() / "swapscope_roundtrip_test.json";
  writeNetworkFile(net, path, {.force = true});
  EXPECT_TRUE(readNetworkFile(path) == net);
  std::filesystem::remove(path);
}

/// A small valid network to corrupt in the error tests.
json smallNet() {
  return json::parse(R"({
    "format": "swapscope-network", "version": 1, "name": "small",
    "layers": [
      {"name": "data", "type": "input", "shape": [3, 8, 8]},
      {"name": "conv", "type": "conv2d", "inputs": ["data"], "out_channels": 4, "kernel": 3,
       "padding": 1},
      {"name": "relu", "type": "relu", "inputs": ["conv"]},
      {"name": "flat", "type": "flatten", "inputs": ["relu"]},
      {"name": "fc", "type": "linear", "inputs": ["flat"], "out_features": 5},
      {"name": "loss", "type": "softmax_cross_entropy", "inputs": ["fc"]}
    ]})");
}

std::string errorFor(const json& doc) {
  try {
    networkFromJson(doc, "net.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << doc.dump();
  return {};
}

void expectContains(const std::string& msg, const std::string& part) {
  EXPECT_NE(msg.find(part), std::string::npos) << "message: " << msg << "\nexpected: " << part;
}

TEST(NetworkJson, ValidSmallNetworkUsesDefaults) {
  const Network net = networkFromJson(smallNet());
  const auto& conv = net.layer(1).as<Conv2dAttrs>();
  EXPECT_EQ(conv.stride_h, 1);
  EXPECT_TRUE(conv.bias);
  EXPECT_EQ(net.outputShape(4), (Shape{{5}}));
  EXPECT_EQ(net.layer(4).as<LinearAttrs>().in_features, 4 * 8 * 8);
}

TEST(NetworkJson, UnknownLayerType) {
  json doc = smallNet();
  doc["layers"][2]["type"] = "gelu";
  const std::string msg = errorFor(doc);
  expectContains(msg, "net.json: layer 'relu': unknown layer type 'gelu'");
  expectContains(msg, "known types: input, conv2d");
}

TEST(NetworkJson, MissingField) {
  json doc = smallNet();
  doc["layers"][1].erase("out_channels");
  expectContains(errorFor(doc), "layer 'conv' (conv2d): missing required field 'out_channels'");
}

TEST(NetworkJson, IllTypedField) {
  json doc = smallNet();
  doc["layers"][1]["out_channels"] = "four";
  expectContains(errorFor(doc),
                 "layer 'conv' (conv2d): field 'out_channels' must be an integer, got \"four\"");
  doc = smallNet();
  doc["layers"][1]["kernel"] = json::array({3, 3, 3});
  expectContains(errorFor(doc), "field 'kernel' must be an integer or an [h, w] pair");
  doc = smallNet();
  doc["layers"][4]["bias"] = 1;
  expectContains(errorFor(doc), "layer 'fc' (linear): field 'bias' must be true or false, got 1");
}

TEST(NetworkJson, UnknownFieldCatchesTypos) {
  json doc = smallNet();
  doc["layers"][1]["strides"] = 2;
  expectContains(errorFor(doc), "layer 'conv' (conv2d): unknown field 'strides'");
}

TEST(NetworkJson, DanglingInput) {
  json doc = smallNet();
  doc["layers"][3]["inputs"] = json::array({"rleu"});
  expectContains(errorFor(doc), "layer 'flat' (flatten): input 'rleu' does not name any layer");
}

TEST(NetworkJson, Cycle) {
  json doc = smallNet();
  doc["layers"][1]["inputs"] = json::array({"relu"});
  expectContains(errorFor(doc), "has a cycle: 'conv' -> 'relu' -> 'conv'");
}

TEST(NetworkJson, ShapeMismatch) {
  json doc = smallNet();
  doc["layers"][4]["in_features"] = 100;
  expectContains(errorFor(doc),
                 "layer 'fc' (linear): expected input shape [100], got [256] from "
                 "'flat'");
  doc = smallNet();
  doc["layers"][1]["in_channels"] = 1;
  expectContains(errorFor(doc),
                 "layer 'conv' (conv2d): expected input shape [1,H,W], got "
                 "[3,8,8] from 'data'");
}

/// smallNet with squeeze-and-excitation after relu: gap, a 1x1 conv, hardsigmoid, a
/// per-channel mul; then clip, sigmoid and hardswish.
json modernNet() {
  json doc = smallNet();
  auto& layers = doc["layers"];
  const json extra = json::parse(R"([
    {"name": "gap", "type": "adaptive_avgpool2d", "inputs": ["relu"], "output_size": 1},
    {"name": "se", "type": "conv2d", "inputs": ["gap"], "out_channels": 4, "kernel": 1},
    {"name": "gate", "type": "hardsigmoid", "inputs": ["se"]},
    {"name": "scale", "type": "mul", "inputs": ["relu", "gate"]},
    {"name": "clip", "type": "clip", "inputs": ["scale"], "max": 6},
    {"name": "sig", "type": "sigmoid", "inputs": ["clip"]},
    {"name": "hs", "type": "hardswish", "inputs": ["sig"]}
  ])");
  layers.insert(layers.begin() + 3, extra.begin(), extra.end());
  layers[10]["inputs"] = json::array({"hs"});  // flat
  return doc;
}

TEST(NetworkJson, TheModernKindsReadWithTheirDefaultsAndWriteBack) {
  const Network net = networkFromJson(modernNet());
  const int gate = net.indexOf("gate"), scale = net.indexOf("scale"), clip = net.indexOf("clip");
  EXPECT_EQ(net.layer(gate).as<HardSigmoidAttrs>().alpha, 1.0 / 6.0);
  EXPECT_EQ(net.layer(gate).as<HardSigmoidAttrs>().beta, 0.5);
  EXPECT_EQ(net.outputShape(gate), (Shape{{4, 1, 1}}));
  EXPECT_EQ(net.outputShape(scale), (Shape{{4, 8, 8}}));
  EXPECT_FALSE(net.layer(clip).as<ClipAttrs>().min.has_value());
  EXPECT_EQ(net.layer(clip).as<ClipAttrs>().max, 6.0);
  const Network back = networkFromText(networkToText(net), "memory");
  EXPECT_EQ(back, net);
  EXPECT_EQ(back.structureHash(), net.structureHash());
}

TEST(NetworkJson, TheModernKindsRefuseWhatTheyCannotCompute) {
  json doc = modernNet();
  doc["layers"][6]["inputs"] = json::array({"relu", "se", "gate"});
  expectContains(errorFor(doc), "layer 'scale' (mul): needs exactly 2 inputs, got 3");
  doc = modernNet();
  doc["layers"][3]["inputs"] = json::array({"data"});  // gap of the 3-channel input
  doc["layers"][4]["out_channels"] = 3;
  expectContains(errorFor(doc),
                 "layer 'scale' (mul): its inputs [4,8,8] from 'relu' and [3,1,1] from 'gate' "
                 "are neither of the same shape nor [C,1,1] and [C,H,W]");
  doc = modernNet();
  doc["layers"][7]["min"] = 7;
  expectContains(errorFor(doc),
                 "layer 'clip' (clip): field 'min' (7.0) must not exceed "
                 "field 'max' (6.0)");
  doc = modernNet();
  doc["layers"][5]["alpha"] = 0;
  expectContains(errorFor(doc), "layer 'gate' (hardsigmoid): field 'alpha' must be positive");
}

TEST(NetworkJson, HeaderErrors) {
  json doc = smallNet();
  doc["format"] = "onnx";
  expectContains(errorFor(doc), "field 'format' must be \"swapscope-network\", got \"onnx\"");
  doc = smallNet();
  doc["version"] = 7;
  expectContains(errorFor(doc), "network format version 7 is not supported");
  doc = smallNet();
  doc["layers"][0].erase("name");
  expectContains(errorFor(doc), "layer #0: missing required field 'name'");
  doc = smallNet();
  doc["layers"][5] = 42;
  expectContains(errorFor(doc), "layer #5: must be a JSON object");
}

TEST(NetworkFile, NotJsonAndMissingFileNameTheFile) {
  const auto path = std::filesystem::temp_directory_path() / "swapscope_bad_test.json";
  std::ofstream(path) << "{\"format\": \"swapscope-network\", ";
  try {
    readNetworkFile(path);
    FAIL();
  } catch (const Error& e) {
    expectContains(e.what(), path.string() + ": not valid JSON");
  }
  std::filesystem::remove(path);
  try {
    readNetworkFile(path);
    FAIL();
  } catch (const Error& e) {
    expectContains(e.what(), "cannot open the network file '" + path.string() + "': no such file");
  }
}

}  // namespace
}  // namespace swapscope
