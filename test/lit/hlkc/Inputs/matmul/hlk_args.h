#pragma once
namespace args {
constexpr int kInputCount = 2;
constexpr int kRt = 2;  // in0 block: kRt x kKt tiles
constexpr int kKt = 3;  // in1 block: kKt x kCt tiles
constexpr int kCt = 2;  // out block: kRt x kCt tiles (fits one dest half)
}
