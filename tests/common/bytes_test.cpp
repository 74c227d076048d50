// SPDX-License-Identifier: MIT
#include "common/bytes.h"

#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "common/format.h"

namespace swapscope {
namespace {

TEST(ParseByteSize, PlainAndBinaryAndDecimalUnits) {
  EXPECT_EQ(parseByteSize("123456"), 123456);
  EXPECT_EQ(parseByteSize("512MiB"), 512LL * 1024 * 1024);
  EXPECT_EQ(parseByteSize("6GiB"), 6LL * 1024 * 1024 * 1024);
  EXPECT_EQ(parseByteSize("1.5GB"), 1500000000LL);
  EXPECT_EQ(parseByteSize("2 kiB"), 2048);
  EXPECT_EQ(parseByteSize("2 KIB"), 2048);
  EXPECT_EQ(parseByteSize("3gB"), 3000000000LL);
  EXPECT_EQ(parseByteSize("10B"), 10);
  EXPECT_EQ(parseByteSize("0.5KiB"), 512);
  EXPECT_EQ(parseByteSize("1TB"), 1000000000000LL);
}

TEST(ParseByteSize, RejectsWithMessageNamingTheValue) {
  for (const char* bad :
       {"", "GiB", "-5", "12 parsecs", "1.5", "99999999999999999999", "3.2.1GB"}) {
    try {
      parseByteSize(bad, "--budget");
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find("--budget"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}

// Megabits are not megabytes: a unit ending in a lowercase b would be read as eight times its
// meaning, and is refused naming the value and why.
TEST(ParseByteSize, ALowercaseBIsBitsAndRefused) {
  for (const char* bits : {"64Mb", "64mb", "64Mib", "2 kib", "1.5gb", "64b", "8 b"}) {
    try {
      parseByteSize(bits, "--budget");
      FAIL() << "accepted '" << bits << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string("--budget: cannot read '") + bits + "'"), std::string::npos)
          << what;
      EXPECT_NE(what.find("lowercase 'b' is bits"), std::string::npos) << what;
    }
  }
}

// A fraction whose digits overflow a double: a usage error, not an exception from the number
// parser (the options fuzzer found `--budget` crashing on one).
TEST(ParseByteSize, AFractionBeyondADoubleIsOutOfRange) {
  const std::string huge = "1" + std::string(400, '0') + ".5GiB";
  try {
    parseByteSize(huge, "--budget");
    FAIL() << "accepted a 401-digit size";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("--budget"), std::string::npos) << e.what();
  }
  // A fraction too small for a double is less than one byte.
  EXPECT_EQ(parseByteSize("0." + std::string(400, '0') + "1GiB", "--budget"), 0);
}

TEST(FormatBytes, PicksBinaryUnits) {
  EXPECT_EQ(formatBytes(812), "812 B");
  EXPECT_EQ(formatBytes(3 * 1024 + 256), "3.25 KiB");
  EXPECT_EQ(formatBytes(1536LL * 1024 * 1024), "1.50 GiB");
}

TEST(LinearBytes, EvaluatesAndAdds) {
  const LinearBytes a{100, 7};
  const LinearBytes b{5, 3};
  EXPECT_EQ(a.at(0), 100);
  EXPECT_EQ(a.at(10), 170);
  EXPECT_EQ((a + b).at(2), 125);
  EXPECT_EQ((a - b), (LinearBytes{95, 4}));
}

TEST(FormatMilliseconds, ThreeDecimalsBelowTenMilliseconds) {
  EXPECT_EQ(formatMilliseconds(7e-6), "0.007");
  EXPECT_EQ(formatMilliseconds(-0.0025), "-2.500");
  EXPECT_EQ(formatMilliseconds(0.79106), "791.1");
}

// A whole training of a small data set takes milliseconds, of a large one days: each in the
// unit that shows it (one decimal of a second printed 49 ms as "0.0 s").
TEST(FormatDuration, MillisecondsBelowASecondThenSecondsMinutesAndHours) {
  EXPECT_EQ(formatDuration(0.049), "49.0 ms");
  EXPECT_EQ(formatDuration(0.0096), "9.600 ms");
  EXPECT_EQ(formatDuration(7e-6), "0.007 ms");
  EXPECT_EQ(formatDuration(0.9994), "999.4 ms");
  EXPECT_EQ(formatDuration(0.99996), "1.0 s");  // not "1000.0 ms"
  EXPECT_EQ(formatDuration(1.26), "1.3 s");
  EXPECT_EQ(formatDuration(42.5), "42.5 s");
  EXPECT_EQ(formatDuration(119.96), "2.0 min");  // not "120.0 s"
  EXPECT_EQ(formatDuration(738), "12.3 min");
  EXPECT_EQ(formatDuration(7197.5), "2.00 h");  // not "120.0 min"
  EXPECT_EQ(formatDuration(95400), "26.50 h");
}

TEST(FormatRelativeError, SignedPercentOfTheMeasurement) {
  EXPECT_EQ(formatRelativeError(519.3, 495.9), "+4.7 %");
  EXPECT_EQ(formatRelativeError(29.5, 41.6), "-29.1 %");
  EXPECT_EQ(formatRelativeError(1, 0), "-");  // nothing to compare with
}

TEST(FormatSi, ThreeSignificantDigits) {
  EXPECT_EQ(formatSi(950), "950");
  EXPECT_EQ(formatSi(1234), "1.23k");
  EXPECT_EQ(formatSi(4.09e9), "4.09G");
  EXPECT_EQ(formatSi(131e9), "131G");
  EXPECT_EQ(formatGrouped(25557032), "25,557,032");
}

}  // namespace
}  // namespace swapscope
