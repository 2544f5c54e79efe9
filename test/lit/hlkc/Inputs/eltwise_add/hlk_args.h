// Arguments of a 2-tile-block eltwise add (hand-written, in the role of the
// header net2hlks generates).
#pragma once
namespace args {
constexpr int kInputCount = 3;   // microbatch entries
constexpr int kBlockTiles = 2;   // tiles per block (one dest half)
}
