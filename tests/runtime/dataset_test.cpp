// SPDX-License-Identifier: MIT
#include "runtime/dataset.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"

namespace swapscope::rt {
namespace {

std::vector<unsigned char> idx(std::uint32_t magic, std::vector<std::uint32_t> dims,
                               std::vector<unsigned char> data) {
  std::vector<unsigned char> out;
  auto be = [&](std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8)
      out.push_back(static_cast<unsigned char>(v >> s));
  };
  be(magic);
  for (auto d : dims)
    be(d);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string write(const std::string& name, const std::vector<unsigned char>& bytes, bool gz) {
  const std::string path = ::testing::TempDir() + "/" + name;
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
  }
  return path;
}

/// Two 2x3 images and their labels.
std::vector<unsigned char> images() {
  return idx(0x803, {2, 2, 3}, {0, 255, 51, 102, 153, 204, 1, 2, 3, 4, 5, 6});
}

std::string messageOf(const std::string& img, const std::string& lab) {
  try {
    readIdxDataset(img, lab, 10, 0.0f, 1.0f);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

TEST(IdxReader, ReadsGzipAndPlainFiles) {
  for (bool gz : {true, false}) {
    const auto img = write(gz ? "i.gz" : "i", images(), gz);
    const auto lab = write(gz ? "l.gz" : "l", idx(0x801, {2}, {7, 3}), gz);
    const Dataset d = readIdxDataset(img, lab, 10, 0.5f, 0.5f);
    EXPECT_EQ(d.size(), 2);
    EXPECT_EQ(d.sample, (Shape{{1, 2, 3}}));
    ASSERT_EQ(d.images.size(), 12u);
    EXPECT_FLOAT_EQ(d.images[0], -1.0f);  // (0/255 - 0.5) / 0.5
    EXPECT_FLOAT_EQ(d.images[1], 1.0f);
    EXPECT_FLOAT_EQ(d.images[2], (0.2f - 0.5f) / 0.5f);
    EXPECT_EQ(d.labels, (std::vector<std::int32_t>{7, 3}));
  }
}

TEST(IdxReader, BadFilesAreClearErrorsNamingTheFile) {
  const auto img = write("good-images", images(), false);
  const auto lab = write("good-labels", idx(0x801, {2}, {7, 3}), false);
  EXPECT_NE(messageOf(img + ".missing", lab).find("no such file"), std::string::npos);
  const auto swapped = messageOf(lab, img);
  EXPECT_NE(swapped.find("good-labels"), std::string::npos) << swapped;
  EXPECT_NE(swapped.find("magic number 0x00000801"), std::string::npos) << swapped;

  auto truncated = images();
  truncated.resize(truncated.size() - 5);
  const auto t = messageOf(write("short", truncated, true), lab);
  EXPECT_NE(t.find("ends after 7 of the 12 bytes"), std::string::npos) << t;

  auto extra = images();
  extra.push_back(9);
  EXPECT_NE(messageOf(write("extra", extra, false), lab).find("unexpected data"),
            std::string::npos);
  const auto count = messageOf(img, write("three", idx(0x801, {3}, {1, 2, 3}), false));
  EXPECT_NE(count.find("3 labels for the 2 images"), std::string::npos) << count;
  const auto range = messageOf(img, write("range", idx(0x801, {2}, {1, 12}), false));
  EXPECT_NE(range.find("label 12 of sample 1"), std::string::npos) << range;
  EXPECT_NE(messageOf(write("empty", {}, false), lab).find("ends after 0"), std::string::npos);
}

TEST(FashionMnist, TheDebianFilesHoldTheKnownSplits) {
  if (!std::filesystem::exists(kFashionMnistDir)) {
    GTEST_SKIP() << kFashionMnistDir << " is missing (Debian package dataset-fashion-mnist)";
  }
  const TrainTest t = loadFashionMnist();
  EXPECT_EQ(t.train.size(), 60000);
  EXPECT_EQ(t.test.size(), 10000);
  EXPECT_EQ(t.train.sample, (Shape{{1, 28, 28}}));
  std::vector<int> perClass(10, 0);
  for (auto y : t.test.labels)
    ++perClass[static_cast<std::size_t>(y)];
  for (int c : perClass)
    EXPECT_EQ(c, 1000);  // the test split is balanced
  double mean = 0;
  for (float v : t.train.images)
    mean += v;
  EXPECT_NEAR(mean / static_cast<double>(t.train.images.size()), 0.0, 0.01)
      << "standardised with the split's mean";
}

TEST(IdxReader, ADataSetLargerThanTheHostMemoryIsRefusedFromItsHeader) {
  // 2^26 images of 4096x4096 pixels: 5 PiB once read and converted. The header alone says so.
  const auto img = write("huge-images", idx(0x803, {1u << 26, 4096, 4096}, {1, 2, 3}), true);
  const auto lab = write("huge-labels", idx(0x801, {1u << 26}, {1}), false);
  const std::string m = messageOf(img, lab);
  EXPECT_NE(m.find(img + " (67108864 images of 4096x4096)"), std::string::npos) << m;
  EXPECT_NE(m.find("of host memory"), std::string::npos) << m;
  EXPECT_NE(m.find("available"), std::string::npos) << m;
  // The sizes come from the headers alone.
  const IdxSize size = readIdxSize(img);
  EXPECT_EQ(size.samples, std::int64_t{1} << 26);
  EXPECT_EQ(size.sample, (Shape{{1, 4096, 4096}}));
}

TEST(FashionMnist, SizesComeFromTheHeadersAlone) {
  if (!std::filesystem::exists(kFashionMnistDir)) {
    GTEST_SKIP() << kFashionMnistDir << " is missing (Debian package dataset-fashion-mnist)";
  }
  const FashionMnistSize size = fashionMnistSize();
  EXPECT_EQ(size.train.samples, 60000);
  EXPECT_EQ(size.test.samples, 10000);
  EXPECT_EQ(size.train.sample, (Shape{{1, 28, 28}}));
  const std::string dir = ::testing::TempDir() + "/no-fashion";
  std::filesystem::create_directories(dir);
  try {
    fashionMnistSize(dir);
    FAIL() << "an empty directory was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/train-images-idx3-ubyte.gz"), std::string::npos)
        << e.what();
  }
}

TEST(Synthetic, ADataSetLargerThanTheHostMemoryIsRefusedBeforeAllocating) {
  try {
    syntheticDataset(Shape{{1, 28, 28}}, 10, std::int64_t{1} << 40, 1);
    FAIL() << "2^40 samples were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    const std::string m = e.what();
    // 2^40 samples of 784 floats and a label: 3140 TiB.
    EXPECT_NE(m.find("the synthetic data set (1099511627776 samples of [1,28,28]): 3140 TiB"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("available"), std::string::npos) << m;
  }
}

TEST(Synthetic, IsSeededAndCoversTheClasses) {
  const Dataset a = syntheticDataset(Shape{{3, 4, 4}}, 5, 100, 1);
  const Dataset b = syntheticDataset(Shape{{3, 4, 4}}, 5, 100, 1);
  const Dataset c = syntheticDataset(Shape{{3, 4, 4}}, 5, 100, 2);
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_NE(a.images, c.images);
  for (auto y : a.labels) {
    EXPECT_GE(y, 0);
    EXPECT_LT(y, 5);
  }
}

}  // namespace
}  // namespace swapscope::rt
