// SPDX-License-Identifier: MIT
#include "graph/zoo.h"

#include "common/error.h"

namespace swapscope {
namespace {

const Shape kImageNet{{3, 224, 224}};
const Shape kCifar{{3, 32, 32}};
const Shape kFashion{{1, 28, 28}};

}  // namespace

const std::vector<ZooEntry>& zooEntries() {
  static const std::vector<ZooEntry> entries{
      {"alexnet", "torchvision", "AlexNet (torchvision variant, 5 conv + 3 FC)", kImageNet, 1000},
      {"vgg11", "torchvision", "VGG-11 (configuration A), no batch norm", kImageNet, 1000},
      {"vgg16", "torchvision", "VGG-16 (configuration D), no batch norm", kImageNet, 1000},
      {"vgg19", "torchvision", "VGG-19 (configuration E), no batch norm", kImageNet, 1000},
      {"googlenet", "torchvision", "GoogLeNet / Inception v1 with batch norm, no auxiliary heads",
       kImageNet, 1000},
      {"resnet18", "torchvision", "ResNet-18, basic blocks [2,2,2,2]", kImageNet, 1000},
      {"resnet34", "torchvision", "ResNet-34, basic blocks [3,4,6,3]", kImageNet, 1000},
      {"resnet50", "torchvision", "ResNet-50 v1.5, bottlenecks [3,4,6,3]", kImageNet, 1000},
      {"resnet101", "torchvision", "ResNet-101 v1.5, bottlenecks [3,4,23,3]", kImageNet, 1000},
      {"resnet152", "torchvision", "ResNet-152 v1.5, bottlenecks [3,8,36,3]", kImageNet, 1000},
      {"resnet20", "cifar-resnet", "CIFAR ResNet-20 (He et al.), 3x3 basic blocks", kCifar, 10},
      {"resnet32", "cifar-resnet", "CIFAR ResNet-32 (He et al.)", kCifar, 10},
      {"resnet56", "cifar-resnet", "CIFAR ResNet-56 (He et al.)", kCifar, 10},
      {"resnet110", "cifar-resnet", "CIFAR ResNet-110 (He et al.)", kCifar, 10},
      {"resnet1202", "cifar-resnet", "CIFAR ResNet-1202 (He et al.), the ultra-deep case", kCifar,
       10},
      {"fmnist-cnn", "small", "Small CNN for Fashion-MNIST: 2 x (conv-bn-relu-pool), 2 FC",
       kFashion, 10},
  };
  return entries;
}

const ZooEntry* findZooEntry(const std::string& name) {
  for (const ZooEntry& e : zooEntries()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

Network buildZooModel(const std::string& name, const ZooOptions& options) {
  const ZooEntry* entry = findZooEntry(name);
  if (entry == nullptr) {
    std::string known;
    for (const ZooEntry& e : zooEntries())
      known += (known.empty() ? "" : ", ") + e.name;
    throwBadInput("unknown model '" + name + "' (the zoo has: " + known + ")");
  }
  const Shape input = options.input.value_or(entry->default_input);
  const std::int64_t classes = options.classes.value_or(entry->default_classes);
  if (!input.isImage()) {
    throwBadInput("model '" + name + "': the input must be CxHxW, got " + input.toString());
  }
  if (classes < 2) {
    throwBadInput("model '" + name + "': the class count must be at least 2, got " +
                  std::to_string(classes));
  }
  if (name == "alexnet") return buildAlexNet(input, classes);
  if (name == "googlenet") return buildGoogLeNet(input, classes);
  if (name == "fmnist-cnn") return buildFashionCnn(input, classes);
  const int depth = std::stoi(name.substr(name.find_first_of("0123456789")));
  if (name.rfind("vgg", 0) == 0) return buildVgg(depth, input, classes);
  if (entry->family == "cifar-resnet") return buildCifarResNet(depth, input, classes);
  return buildResNet(depth, input, classes);
}

}  // namespace swapscope
