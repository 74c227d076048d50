// SPDX-License-Identifier: MIT
// main() of the test binaries that need Qt (swapscope_test's QT_MAIN): a QApplication first, on
// the offscreen platform unless QT_QPA_PLATFORM names another, then every test.
#include <QApplication>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
