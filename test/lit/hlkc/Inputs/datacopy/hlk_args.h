#pragma once
namespace args {
constexpr int kInputCount = 4;
constexpr int kTiles = 8;        // tiles per input: 2 blocks of 4
constexpr int kBlockTiles = 4;
}
