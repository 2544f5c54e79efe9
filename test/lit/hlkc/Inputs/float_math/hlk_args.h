#pragma once
namespace args {
constexpr float kScale = 0.125f;
}
