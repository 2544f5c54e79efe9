#pragma once
namespace args {
constexpr int kTableWords = 6000;  // 24000 bytes of .rodata: more than any code region
}
