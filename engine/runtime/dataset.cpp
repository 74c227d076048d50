// SPDX-License-Identifier: MIT
#include "runtime/dataset.h"

#include <zlib.h>

#include <array>
#include <filesystem>
#include <memory>

#include "common/error.h"
#include "common/files.h"
#include "runtime/host_memory.h"
#include "runtime/rng.h"

namespace swapscope::rt {
namespace {

/// A gzip or plain file, read through zlib (which reads uncompressed files unchanged).
class GzFile {
 public:
  explicit GzFile(const std::string& path) : m_path(path) {
    files::checkInputFile(path, "the data set file");
    m_file = gzopen(path.c_str(), "rb");
    if (!m_file) throwBadInput("cannot open the data set file '" + path + "'");
  }
  ~GzFile() {
    if (m_file) gzclose(m_file);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  /// Reads exactly `bytes`, or fails naming `what`.
  void read(void* dst, std::size_t bytes, const std::string& what) {
    auto* p = static_cast<unsigned char*>(dst);
    std::size_t done = 0;
    while (done < bytes) {
      const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(bytes - done, 1u << 30));
      const int got = gzread(m_file, p + done, chunk);
      if (got < 0) {
        int code = 0;
        const char* msg = gzerror(m_file, &code);
        throwBadInput(m_path + ": corrupt data while reading " + what + " (" + msg + ")");
      }
      if (got == 0) {
        throwBadInput(m_path + ": the file ends after " + std::to_string(done) + " of the " +
                      std::to_string(bytes) + " bytes of " + what);
      }
      done += static_cast<std::size_t>(got);
    }
  }
  std::uint32_t readU32(const std::string& what) {
    std::array<unsigned char, 4> b{};
    read(b.data(), 4, what);
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
           std::uint32_t{b[3]};
  }
  bool atEnd() {
    unsigned char c = 0;
    return gzread(m_file, &c, 1) == 0;
  }

 private:
  std::string m_path;
  gzFile m_file = nullptr;
};

std::string hex(std::uint32_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 7; i >= 0; --i)
    s += digits[(v >> (4 * i)) & 0xF];
  return s;
}

std::string existing(const std::string& dir, const std::string& stem) {
  const std::string gz = dir + "/" + stem + ".gz";
  if (std::filesystem::exists(gz)) return gz;
  const std::string plain = dir + "/" + stem;
  if (std::filesystem::exists(plain)) return plain;
  throwBadInput(gz + ": no such file (nor " + plain +
                "); install the Debian package dataset-fashion-mnist");
}

struct IdxHeader {
  std::uint32_t n = 0, rows = 0, cols = 0;
};

/// Reads and checks the header of an IDX image file.
IdxHeader readImageHeader(GzFile& img, const std::string& imagesPath) {
  const std::uint32_t magic = img.readU32("the magic number");
  if (magic != 0x00000803) {
    throwBadInput(imagesPath + ": magic number " + hex(magic) +
                  " is not that of an IDX file of uint8 images (0x00000803)");
  }
  IdxHeader h;
  h.n = img.readU32("the image count");
  h.rows = img.readU32("the row count");
  h.cols = img.readU32("the column count");
  if (h.n == 0 || h.rows == 0 || h.cols == 0 || h.rows > 4096 || h.cols > 4096 ||
      h.n > (1u << 26)) {
    throwBadInput(imagesPath + ": implausible dimensions " + std::to_string(h.n) + " x " +
                  std::to_string(h.rows) + " x " + std::to_string(h.cols));
  }
  return h;
}

}  // namespace

Dataset readIdxDataset(const std::string& imagesPath, const std::string& labelsPath,
                       std::int64_t classes, float mean, float stddev) {
  Dataset d;
  d.classes = classes;
  GzFile img(imagesPath);
  const auto [n, rows, cols] = readImageHeader(img, imagesPath);
  {
    HostMemoryNeed need;
    need.add("the data set " + imagesPath + " (" + std::to_string(n) + " images of " +
                 std::to_string(rows) + "x" + std::to_string(cols) + ")",
             idxLoadHostBytes(Shape{{1, rows, cols}}, n));
    checkHostMemory(need, availableHostMemory());
  }
  const std::size_t pixels = std::size_t{n} * rows * cols;
  std::vector<unsigned char> raw(pixels);
  img.read(raw.data(), pixels,
           std::to_string(n) + " images of " + std::to_string(rows) + "x" + std::to_string(cols));
  if (!img.atEnd()) throwBadInput(imagesPath + ": unexpected data after the last image");

  GzFile lab(labelsPath);
  const std::uint32_t lmagic = lab.readU32("the magic number");
  if (lmagic != 0x00000801) {
    throwBadInput(labelsPath + ": magic number " + hex(lmagic) +
                  " is not that of an IDX file of uint8 labels (0x00000801)");
  }
  const std::uint32_t ln = lab.readU32("the label count");
  if (ln != n) {
    throwBadInput(labelsPath + ": " + std::to_string(ln) + " labels for the " + std::to_string(n) +
                  " images of " + imagesPath);
  }
  std::vector<unsigned char> rawLabels(n);
  lab.read(rawLabels.data(), n, std::to_string(n) + " labels");
  if (!lab.atEnd()) throwBadInput(labelsPath + ": unexpected data after the last label");

  d.sample = Shape{{1, rows, cols}};
  d.images.resize(pixels);
  for (std::size_t i = 0; i < pixels; ++i)
    d.images[i] = (static_cast<float>(raw[i]) / 255.0f - mean) / stddev;
  d.labels.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (rawLabels[i] >= classes) {
      throwBadInput(labelsPath + ": label " + std::to_string(rawLabels[i]) + " of sample " +
                    std::to_string(i) + " is not one of the " + std::to_string(classes) +
                    " classes");
    }
    d.labels[i] = rawLabels[i];
  }
  return d;
}

IdxSize readIdxSize(const std::string& imagesPath) {
  GzFile img(imagesPath);
  const IdxHeader h = readImageHeader(img, imagesPath);
  return {Shape{{1, h.rows, h.cols}}, h.n};
}

FashionMnistSize fashionMnistSize(const std::string& dir) {
  // Resolve the four paths in order, so the first missing one is the one reported.
  const std::string trainImages = existing(dir, "train-images-idx3-ubyte");
  existing(dir, "train-labels-idx1-ubyte");
  const std::string testImages = existing(dir, "t10k-images-idx3-ubyte");
  existing(dir, "t10k-labels-idx1-ubyte");
  return {readIdxSize(trainImages), readIdxSize(testImages)};
}

TrainTest loadFashionMnist(const std::string& dir) {
  constexpr float kMean = 0.2860f, kStd = 0.3530f;
  // Resolve the four paths in order, so the first missing one is the one reported.
  const std::string trainImages = existing(dir, "train-images-idx3-ubyte");
  const std::string trainLabels = existing(dir, "train-labels-idx1-ubyte");
  const std::string testImages = existing(dir, "t10k-images-idx3-ubyte");
  const std::string testLabels = existing(dir, "t10k-labels-idx1-ubyte");
  TrainTest t;
  t.train = readIdxDataset(trainImages, trainLabels, 10, kMean, kStd);
  t.test = readIdxDataset(testImages, testLabels, 10, kMean, kStd);
  t.train.name = "fashion-mnist/train";
  t.test.name = "fashion-mnist/test";
  return t;
}

Dataset syntheticDataset(const Shape& sample, std::int64_t classes, std::int64_t count,
                         std::uint64_t seed) {
  if (classes < 1 || count < 1) throwBadInput("synthetic data needs at least one class and sample");
  {
    HostMemoryNeed need;
    need.add("the synthetic data set (" + std::to_string(count) + " samples of " +
                 sample.toString() + ")",
             datasetHostBytes(sample, count));
    checkHostMemory(need, availableHostMemory());
  }
  Dataset d;
  d.name = "synthetic";
  d.sample = sample;
  d.classes = classes;
  const std::uint64_t imageSeed = deriveSeed(seed, 0x5EED1), labelSeed = deriveSeed(seed, 0x5EED2);
  d.images.resize(static_cast<std::size_t>(count * sample.numel()));
  for (std::size_t i = 0; i < d.images.size(); ++i)
    d.images[i] = static_cast<float>(normal01(imageSeed, i));
  d.labels.resize(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < d.labels.size(); ++i)
    d.labels[i] = static_cast<std::int32_t>(uniform01(labelSeed, i) * static_cast<double>(classes));
  return d;
}

}  // namespace swapscope::rt
