// SPDX-License-Identifier: MIT
/// @brief Training data: Fashion-MNIST from IDX files (gzip or plain), and seeded synthetic data
/// of any shape. Images are fp32 in NCHW, labels int32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/shape.h"

namespace swapscope::rt {

struct Dataset {
  std::string name;
  Shape sample;  ///< per-sample shape, e.g. [1,28,28]
  std::int64_t classes = 0;
  std::vector<float> images;  ///< size() * sample.numel() values
  std::vector<std::int32_t> labels;
  std::int64_t size() const { return static_cast<std::int64_t>(labels.size()); }
};

/// Reads an IDX image file (magic 0x00000803, uint8 [n, rows, cols]) and its IDX label file
/// (magic 0x00000801, uint8 [n]). Either may be gzip-compressed. Pixels are scaled to [0, 1]
/// and then standardised with `mean` and `stddev`. Every problem (missing file, bad magic,
/// truncated data, counts that disagree, a label >= `classes`) is Error(BadInput) naming the file,
/// and so is a data set larger than the host memory available (checked from the header, before
/// the data is read).
Dataset readIdxDataset(const std::string& imagesPath, const std::string& labelsPath,
                       std::int64_t classes, float mean, float stddev);

struct TrainTest {
  Dataset train, test;
};
/// The default directory of the Debian package dataset-fashion-mnist.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
/// Fashion-MNIST's train and test splits from `dir` ({train,t10k}-{images-idx3,labels-idx1}-ubyte
/// with or without .gz), standardised with the train split's mean 0.2860 and std 0.3530.
TrainTest loadFashionMnist(const std::string& dir = kFashionMnistDir);

/// The sample shape and count of an IDX image file, from its header only (checked as
/// readIdxDataset checks it).
struct IdxSize {
  Shape sample;
  std::int64_t samples = 0;
};
IdxSize readIdxSize(const std::string& imagesPath);
struct FashionMnistSize {
  IdxSize train, test;
};
/// The sizes of Fashion-MNIST's splits in `dir`, from the headers, without loading them.
FashionMnistSize fashionMnistSize(const std::string& dir = kFashionMnistDir);

/// `count` seeded samples of `sample` shape: standard normal values, uniform labels. Refused
/// (Error(BadInput) with the figures) before anything is allocated where the host memory
/// available cannot hold them.
Dataset syntheticDataset(const Shape& sample, std::int64_t classes, std::int64_t count,
                         std::uint64_t seed);

}  // namespace swapscope::rt
