// SPDX-License-Identifier: MIT
/// Network JSON from a hostile user: nesting 100,000 deep (a crash if anything recursed over it),
/// 20 MB strings (a 20 MB message if echoed whole), integers beyond the 32-bit sizes and beyond
/// 64 bits, and the bounded echo and depth helpers themselves.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/format.h"
#include "graph/json_guard.h"
#include "graph/network_json.h"

namespace swapscope {
namespace {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

/// Messages stay short whatever the input: about the echo limit plus the fixed text around it.
constexpr std::size_t kMaxMessage = 400;

std::string nested(int depth, const std::string& inner = "1") {
  return std::string(static_cast<std::size_t>(depth), '[') + inner +
         std::string(static_cast<std::size_t>(depth), ']');
}

/// A small valid network as text, with `shape`, `out_channels` and `layers` replaceable.
std::string netText(const std::string& shape = "[3, 8, 8]", const std::string& outChannels = "4",
                    const std::string& layers = "") {
  if (!layers.empty()) {
    return R"({"format": "swapscope-network", "version": 1, "name": "small", "layers": )" + layers +
           "}";
  }
  return R"({"format": "swapscope-network", "version": 1, "name": "small", "layers": [
    {"name": "data", "type": "input", "shape": )" +
         shape + R"(},
    {"name": "conv", "type": "conv2d", "inputs": ["data"], "out_channels": )" +
         outChannels + R"(, "kernel": 3, "padding": 1},
    {"name": "flat", "type": "flatten", "inputs": ["conv"]},
    {"name": "fc", "type": "linear", "inputs": ["flat"], "out_features": 5},
    {"name": "loss", "type": "softmax_cross_entropy", "inputs": ["fc"]}]})";
}

fs::path writeTemp(const std::string& name, const std::string& text) {
  const fs::path p =
      fs::temp_directory_path() / ("swapscope-hostile-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

template <typename F>
std::string badInput(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

void expectContains(const std::string& msg, const std::string& part) {
  EXPECT_NE(msg.find(part), std::string::npos)
      << "message: " << msg.substr(0, 1000) << "\nexpected: " << part;
}

// --- duplicate keys ----------------------------------------------------------------------------

// nlohmann keeps the last of two equal keys, so "out_channels": 4, "out_channels": 8 silently
// built 8 channels: the reader refuses it, naming the key, the line and the file.
TEST(DuplicateKeys, ANetworkFileGivingAKeyTwiceIsRefusedWithItsLine) {
  std::string text = netText();
  const std::string field = R"("out_channels": 4)";
  text.replace(text.find(field), field.size(), R"("out_channels": 4, "out_channels": 8)");
  const fs::path p = writeTemp("twice.json", text);
  const std::string msg = badInput([&] { (void)readNetworkFile(p); });
  fs::remove(p);
  expectContains(msg, p.string() + ": key \"out_channels\" is given twice in one object (line 3)");
}

TEST(DuplicateKeys, TheTopLevelAndNestedObjectsAreChecked) {
  std::string text = netText();
  text.replace(text.find(R"("name": "small")"), 15, R"("name": "small", "name": "big")");
  expectContains(badInput([&] { (void)networkFromText(text, "n.json"); }),
                 R"(n.json: key "name" is given twice in one object (line 1))");
  // The same key in two objects, and in an object and its child, is no duplicate.
  const json doc = parseOrderedJsonUniqueKeys(R"({"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]})", "x");
  EXPECT_EQ(doc["b"][1]["a"], 3);
  EXPECT_EQ(doc["a"]["a"], 1);
  EXPECT_EQ(networkFromText(netText(), "ok.json").size(), 5);
}

TEST(DuplicateKeys, ASyntaxErrorIsStillTheParsersOwn) {
  EXPECT_THROW((void)parseJsonUniqueKeys(R"({"a": 1,)", "x"), nlohmann::json::parse_error);
  EXPECT_TRUE(parseJsonUniqueKeys(R"({"a": 1,)", "x", false).is_discarded());
  expectContains(badInput([] { (void)parseJsonUniqueKeys(R"({"a": 1, "a": 1})", "x", false); }),
                 R"(x: key "a" is given twice)");
}

// --- nesting -----------------------------------------------------------------------------------

class DeepNesting : public ::testing::TestWithParam<std::string> {};

std::string deepNetwork(const std::string& where) {
  const std::string deep = nested(100000);
  if (where == "layers") return netText("", "", "[" + deep + "]");
  if (where == "shape") return netText(deep);
  return netText("[3, 8, 8]", deep);
}

TEST_P(DeepNesting, FileIsRefusedWithTheDepthNamed) {
  const fs::path p = writeTemp(GetParam() + ".json", deepNetwork(GetParam()));
  const std::string msg = badInput([&] { readNetworkFile(p); });
  fs::remove(p);
  expectContains(msg, p.string() + ": JSON nested deeper than 64 levels at line ");
  EXPECT_LT(msg.size(), kMaxMessage);
}

/// 100,000 arrays around 1, built without recursion. (Parsing such text into an ordered_json
/// recurses as soon as a key follows the deep value: the object's storage grows by copying.)
json deepValue() {
  json v = 1;
  for (int i = 0; i < 100000; ++i) {
    json a = json::array();
    a.push_back(std::move(v));
    v = std::move(a);
  }
  return v;
}

TEST_P(DeepNesting, DocumentIsRefusedWithoutRecursing) {
  json doc = json::parse(netText());
  if (GetParam() == "layers") doc["layers"][0] = deepValue();
  if (GetParam() == "shape") doc["layers"][0]["shape"] = deepValue();
  if (GetParam() == "out_channels") doc["layers"][1]["out_channels"] = deepValue();
  const std::string msg = badInput([&] { networkFromJson(doc, "net.json"); });
  expectContains(msg, "net.json: JSON nested deeper than 64 levels");
  EXPECT_LT(msg.size(), kMaxMessage);
}

TEST_P(DeepNesting, TextIsRefusedBeforeParsing) {
  const std::string msg =
      badInput([&] { networkFromText(deepNetwork(GetParam()), "db.swapdb (network)"); });
  expectContains(msg, "db.swapdb (network): JSON nested deeper than 64 levels at line ");
}

INSTANTIATE_TEST_SUITE_P(Fields, DeepNesting, ::testing::Values("layers", "shape", "out_channels"));

TEST(JsonDepth, ADeepDocumentAfterAByteOrderMarkIsRefusedToo) {
  const std::string msg =
      badInput([&] { networkFromText("\xEF\xBB\xBF \n" + deepNetwork("shape"), "n.json"); });
  expectContains(msg, "n.json: JSON nested deeper than 64 levels at line ");
}

TEST(JsonDepth, BinaryBytesAreNotJsonRatherThanTooDeep) {
  // Brackets among binary bytes are no nesting: a text that opens no container is not JSON.
  std::string bytes = "\x01\x02";
  bytes += std::string(200, '[');
  expectContains(badInput([&] { networkFromText(bytes, "n.json"); }), "n.json: not valid JSON");
  // An SQLite file (a run database given as a network) is named as such.
  std::string sqlite("SQLite format 3\0", 16);
  sqlite += std::string(100, '[');
  expectContains(badInput([&] { networkFromText(sqlite, "r.swapdb"); }),
                 "r.swapdb: an SQLite database (a run database?), not a network JSON file");
}

TEST(JsonDepth, SixtyFourLevelsAreReadAndSixtyFiveRefused) {
  // The document is level 1, "layers" 2, a layer 3, its "shape" 4: 60 more arrays inside the
  // shape make 64 levels, which the depth check lets through to the field check.
  const std::string at64 = netText("[" + nested(60) + "]");
  EXPECT_FALSE(jsonTooDeepAt(at64));
  expectContains(badInput([&] { networkFromText(at64, "n.json"); }),
                 "field 'shape' must be an array of integers");
  const std::string at65 = netText("[" + nested(61) + "]");
  ASSERT_TRUE(jsonTooDeepAt(at65));
  EXPECT_EQ(at65[*jsonTooDeepAt(at65)], '[');
  expectContains(badInput([&] { networkFromText(at65, "n.json"); }),
                 "n.json: JSON nested deeper than 64 levels");
  EXPECT_FALSE(jsonTooDeep(json::parse(at64)));
  EXPECT_TRUE(jsonTooDeep(json::parse(at65)));
}

TEST(JsonDepth, BracketsInsideStringsDoNotCount) {
  const std::string text = R"({"a": "[[[[[[[[\"[[[[[[", "b": [1]})";
  EXPECT_FALSE(jsonTooDeepAt(text, 2));
  EXPECT_EQ(jsonTooDeepAt(text, 1), text.find("[1]"));
}

TEST(NetworkText, NotJsonIsNamedWithABoundedMessage) {
  // An unterminated 20 MB string: the parser's message quotes the whole token.
  const std::string text = R"({"format": ")" + std::string(20 << 20, 'x');
  const std::string msg = badInput([&] { networkFromText(text, "net.json"); });
  expectContains(msg, "net.json: not valid JSON: ");
  expectContains(msg, "xxx... (");
  EXPECT_LT(msg.size(), kMaxMessage);
}

// --- long strings --------------------------------------------------------------------------------

TEST(LongStrings, TwentyMegabyteValuesGiveShortMessages) {
  const std::string big(20 << 20, 'a');
  const std::string quoted = "\"" + big + "\"";
  const struct {
    std::string text, expected;
  } cases[] = {
      {netText("[3, 8, " + quoted + "]"), "field 'shape' must be an array of integers, got "},
      {netText("[3, 8, 8]", quoted), "field 'out_channels' must be an integer, got \"aaa"},
      {netText("", "", R"([{"name": )" + quoted + R"(, "type": "input", "shape": [1]}])"),
       "layer #0: field 'name' is 20971520 bytes long, more than 256"},
      {netText("", "", R"([{"name": "data", "type": )" + quoted + "}]"),
       "layer 'data': unknown layer type 'aaa"},
      {netText("", "", R"([{"name": "data", "type": "input", "shape": [1], )" + quoted + ": 1}]"),
       "layer 'data' (input): unknown field 'aaa"},
      {netText("", "", R"([{"name": "data", "type": "relu", "inputs": [)" + quoted + "]}]"),
       "layer 'data' (relu): field 'inputs' holds a name of 20971520 bytes, more than 256"},
      {R"({"format": )" + quoted + "}", "field 'format' must be \"swapscope-network\", got \"aaa"},
      {R"({"format": "swapscope-network", "version": 1, "layers": [], "name": )" + quoted + "}",
       "field 'name' is 20971520 bytes long, more than 256"},
  };
  for (const auto& c : cases) {
    const std::string msg = badInput([&] { networkFromText(c.text, "net.json"); });
    expectContains(msg, c.expected);
    EXPECT_LT(msg.size(), kMaxMessage) << msg.substr(0, 200);
  }
}

TEST(LongStrings, NamesUpToTheLimitAreAccepted) {
  const std::string name(kMaxNameBytes, 'n');
  std::string text = netText();
  text.replace(text.find("\"fc\""), 4, "\"" + name + "\"");
  text.replace(text.find("[\"fc\"]"), 6, "[\"" + name + "\"]");
  EXPECT_EQ(networkFromText(text, "n.json").layer(3).name, name);
}

// --- integers ------------------------------------------------------------------------------------

TEST(IntegerFields, ValuesBeyondThirtyTwoBitsAreRefusedNotTruncated) {
  const struct {
    std::string text, expected;
  } cases[] = {
      {netText("[8589934592]"),
       "layer 'data' (input): field 'shape' must be at most 2147483647, got 8589934592"},
      {netText("[3, 8, 8]", "2147483648"),
       "layer 'conv' (conv2d): field 'out_channels' must be at most 2147483647, got 2147483648"},
      // Beyond 64 bits signed: once read as -1 ("must be positive, got -1").
      {netText("[3, 8, 8]", "18446744073709551615"),
       "field 'out_channels' must be at most 2147483647, got 18446744073709551615"},
      {netText("[3, 8, 8]", "-2147483649"),
       "field 'out_channels' must be at least -2147483648, got -2147483649"},
  };
  for (const auto& c : cases)
    expectContains(badInput([&] { networkFromText(c.text, "net.json"); }), c.expected);

  std::string pair = netText();
  pair.replace(pair.find("\"kernel\": 3"), 11, "\"kernel\": [3, 4294967299]");
  expectContains(badInput([&] { networkFromText(pair, "net.json"); }),
                 "field 'kernel' must be at most 2147483647, got 4294967299");
}

TEST(IntegerFields, AVersionBeyondThirtyTwoBitsIsNotReadAsOne) {
  std::string text = netText();
  text.replace(text.find("\"version\": 1"), 12, "\"version\": 4294967297");
  expectContains(badInput([&] { networkFromText(text, "net.json"); }),
                 "network format version 4294967297 is not supported");
}

TEST(IntegerFields, TheLargestThirtyTwoBitSizesAreRead) {
  // Within range, then refused for its size by the network's own rule, not by the reader.
  expectContains(badInput([&] { networkFromText(netText("[2147483647, 64, 64]"), "n.json"); }),
                 "layer 'data' (input): output [2147483647,64,64] has more than 2^36 elements");
}

// --- the echo helpers ---------------------------------------------------------------------------

TEST(Echo, TextIsEscapedAndCut) {
  EXPECT_EQ(echoText("conv1"), "conv1");
  EXPECT_EQ(echoText("a\nb\tc\x01"), "a\\nb\\tc\\x01");
  const std::string cut = echoText(std::string(1000, 'z'), 10);
  EXPECT_EQ(cut, std::string(10, 'z') + "... (1000 bytes)");
  // Never inside a UTF-8 character: "é" is two bytes.
  std::string accents;
  for (int i = 0; i < 100; ++i)
    accents += "\xc3\xa9";
  const std::string e = echoText(accents, 11);
  EXPECT_EQ(e.substr(0, e.find("...")).size() % 2, 0u) << e;
  EXPECT_EQ(e.substr(e.find("...")), "... (200 bytes)");
}

// Bytes that are not UTF-8 are written as \xNN, as control characters are: raw, they reached
// the terminal (a network name's 0xFF in a parse error, a meta value in `info`).
TEST(Echo, BytesThatAreNotUtf8AreEscapedAndCharactersKept) {
  EXPECT_EQ(echoText("a\xff"
                     "b\xc3\xa9"),
            "a\\xffb\xc3\xa9");
  EXPECT_EQ(echoText("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(echoText("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(echoText("x\xe2\x82"), "x\\xe2\\x82");         // cut short
  EXPECT_EQ(echoText("\xe2\x82\xac\xf0\x9f\x98\x80"), "\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(quoteBounded("{\"A\":\"\xff\"}"), "'{\"A\":\"\\xff\"}'");
  EXPECT_EQ(quoteBounded(std::string("n\xc3\xa9\x00", 4)), "'n\xc3\xa9\\x00'");
}

TEST(Echo, JsonIsBoundedInDepthAndLength) {
  EXPECT_EQ(echoJson(json::parse(R"({"a": [1, 2], "b": "x"})")), R"({"a":[1,2],"b":"x"})");
  EXPECT_EQ(echoJson(json::parse(nested(100000))), "[[[[...]]]]");
  json wide = json::array();
  for (int i = 0; i < 100000; ++i)
    wide.push_back(i);
  const std::string w = echoJson(wide);
  EXPECT_LE(w.size(), kMaxEchoChars + 30) << w;
  EXPECT_EQ(w.substr(0, 8), "[0,1,2,3");
  const std::string s = echoJson(json(std::string(20 << 20, 'q')));
  EXPECT_LE(s.size(), kMaxEchoChars + 30);
  EXPECT_EQ(s.substr(s.size() - 17), "(20971520 bytes)\"");
}

TEST(LayerCount, ANetworkWithMoreLayersThanTheLimitIsRefusedNamingTheCount) {
  std::string layers = R"([{"name": "data", "type": "input", "shape": [1, 2, 2]})";
  for (std::size_t i = 1; i <= kMaxLayers; ++i)  // kMaxLayers + 1 layers in all
    layers += R"(, {"name": "r)" + std::to_string(i) + R"(", "type": "relu"})";
  layers += "]";
  try {
    (void)networkFromText(netText("", "", layers), "big.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_STREQ(e.what(),
                 "big.json: field 'layers' has 32769 layers, more than the 32768 a "
                 "network may have");
  }
}

}  // namespace
TEST(NulBytes, WhateverFollowsANulByteIsNotIgnored) {
  // nlohmann's parser takes a raw NUL for the end of its input: the text after it would pass
  // unread, whatever it holds.
  const std::string text = netText() + std::string(1, '\0') + "garbage{{{";
  expectContains(badInput([&] { (void)networkFromText(text, "n.json"); }),
                 "n.json: a NUL byte at line ");
  expectContains(badInput([&] { (void)networkFromText(text, "n.json"); }),
                 "; a JSON text has none (a binary file?)");
  // A binary file says so, not that it nests too deep.
  const std::string binary = std::string(
                                 "\x7f"
                                 "ELF\x02\x01\x01\0",
                                 8) +
                             std::string(200, '[');
  expectContains(badInput([&] { (void)networkFromText(binary, "n.json"); }),
                 "n.json: a NUL byte at line 1, column 8");
}

TEST(UnknownFields, AnUnknownTopLevelFieldIsRefusedAsInALayer) {
  std::string text = netText();
  text.replace(text.find(R"("name": "small")"), 15, R"("name": "small", "input_shape": [1, 2])");
  expectContains(
      badInput([&] { (void)networkFromText(text, "n.json"); }),
      "n.json: unknown field 'input_shape' (known fields: format, layers, name, version)");
}

TEST(Sizes, AConcatMakingADimensionAboveThirtyTwoBitsIsRefused) {
  const std::string layers = R"([
    {"name": "data", "type": "input", "shape": [2147483647, 1, 1]},
    {"name": "c", "type": "concat", "inputs": ["data", "data"]},
    {"name": "r", "type": "relu", "inputs": ["c"]},
    {"name": "f", "type": "flatten", "inputs": ["r"]},
    {"name": "loss", "type": "softmax_cross_entropy", "inputs": ["f"]}])";
  expectContains(badInput([&] { (void)networkFromText(netText("", "", layers), "n.json"); }),
                 "n.json: layer 'c' (concat): output [4294967294,1,1] has a dimension above "
                 "2147483647, the most the layer libraries index (32-bit sizes)");
}

TEST(Messages, NamesAreEscapedCyclesCutAndNumbersShortest) {
  // A cycle through 20 ReLUs names the first 8 and counts the rest.
  json layers = json::array({{{"name", "data"}, {"type", "input"}, {"shape", {1, 4, 4}}}});
  for (int i = 0; i < 20; ++i) {
    layers.push_back({{"name", "r" + std::to_string(i)},
                      {"type", "relu"},
                      {"inputs", {"r" + std::to_string((i + 19) % 20)}}});
  }
  layers.push_back({{"name", "f"}, {"type", "flatten"}, {"inputs", {"data"}}});
  layers.push_back({{"name", "loss"}, {"type", "softmax_cross_entropy"}, {"inputs", {"f"}}});
  const std::string cycle =
      badInput([&] { (void)networkFromText(netText("", "", layers.dump()), "n.json"); });
  expectContains(cycle,
                 "has a cycle: 'r0' -> 'r1' -> 'r2' -> 'r3' -> 'r4' -> 'r5' -> 'r6' -> "
                 "'r7' -> ... (20 layers in the cycle)");
  // A name's control characters are escaped: it cannot start a line of its own.
  std::string text = netText();
  text.replace(text.find(R"("name": "fc")"), 12, R"("name": "f\nc")");
  text.replace(text.find(R"("inputs": ["fc"])"), 16, R"("inputs": ["f\nc"])");
  text.replace(text.find(R"("out_features": 5)"), 17, R"("out_features": 0)");
  const std::string withName = badInput([&] { (void)networkFromText(text, "n.json"); });
  EXPECT_EQ(withName.find('\n'), std::string::npos) << withName;
  expectContains(withName, R"(layer 'f\nc' (linear))");
  // Numbers as written, shortest: -1e-07, not -0.000000.
  std::string drop = netText();
  drop.replace(drop.find(R"({"name": "flat")"), 15,
               R"({"name": "d", "type": "dropout", "inputs": ["conv"], "p": -1e-7},
    {"name": "flat")");
  drop.replace(drop.find(R"("inputs": ["conv"]})"), 19, R"("inputs": ["d"]})");
  expectContains(badInput([&] { (void)networkFromText(drop, "n.json"); }),
                 "field 'p' must be in [0,1), got -1e-07");
}

}  // namespace swapscope
