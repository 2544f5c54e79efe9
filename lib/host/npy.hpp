// NumPy .npy files (format versions 1.0-3.0): the loader's --inputs/--outputs.
// Reads little-endian float16/32/64, (u)int8/16/32/64 and bool arrays of 0-4
// dimensions in C order; writes float32 (uint32 for tensors carrying exact
// RawUInt32 words), C order, shape [w, t, rows, cols]. uint32 input keeps its
// words exactly in Tensor::rawBits.
// docs/stimulus.md has the details.
#pragma once
#include "formats/tensor.hpp"

#include <stdexcept>
#include <string>

namespace tessera::host {

struct NpyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A 0-4 dimensional array becomes [w][z][r][c] with missing leading dims = 1.
formats::Tensor readNpy(const std::string& path);          // throws NpyError (message names the file and the problem)
formats::Tensor parseNpy(const std::string& bytes, const std::string& nameForErrors);
std::string encodeNpy(const formats::Tensor& t);           // 4-D float32, or uint32 with rawBits
void writeNpy(const std::string& path, const formats::Tensor& t); // atomic; throws NpyError

} // namespace tessera::host
