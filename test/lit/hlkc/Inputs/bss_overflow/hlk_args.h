#pragma once
namespace args {
constexpr int kScratchWords = 800;  // 3200 bytes of .bss: with the 1 KiB stack over 4 KiB
}
