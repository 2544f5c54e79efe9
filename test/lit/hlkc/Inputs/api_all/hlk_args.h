#pragma once
namespace args {
constexpr int kInputCount = 2;
}
