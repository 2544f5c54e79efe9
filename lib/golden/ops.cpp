// Host reference model of single ops. docs/golden-model.md states the
// numerical model and, per op, what BUDA's own golden does and where we
// deliberately differ or approximate.
#include "golden/ops.hpp"

#include "golden/gemm.hpp"
#include "golden/product.hpp"

#include "formats/formats.hpp"
#include "golden/special_ops.hpp"


#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#if defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>
#endif
#include <optional>
#include <stdexcept>

namespace tessera::golden {
namespace {

using detail::highA;
using detail::highB;
using detail::Phases;
using detail::phasesOf;
using detail::ProductTerms;
using detail::representable;

using netlist::Attribute;
using netlist::OpAttributes;

constexpr int64_t kTile = formats::kTileDim;
// Output rows per panel of a matmul rounded in dest per tile (64 x 1024
// floats: 256 KB, within L2).
constexpr int64_t kPanelRows = kGemmPanelRows;

// ---------------------------------------------------------------- helpers
// Tensor::at on a const tensor returns a value; row copies need the address.
const float* valuePtr(const Tensor& t, int64_t w, int64_t z, int64_t r, int64_t c) {
  return t.data.data() + t.index(w, z, r, c);
}

std::string shapeText(const Tensor& t) {
  return "[w=" + std::to_string(t.w) + ", z=" + std::to_string(t.z) + ", " + std::to_string(t.r) + "x" +
         std::to_string(t.c) + "]";
}

[[noreturn]] void fail(const OpSpec& spec, const std::string& message) {
  throw GoldenError("op '" + spec.name + "' (" + spec.type + "): " + message);
}

const OpAttributes& attrsOf(const OpSpec& spec) {
  static const OpAttributes kNone;
  return spec.attrs ? *spec.attrs : kNone;
}

std::optional<double> numberAttr(const OpAttributes& attrs, const char* key) {
  const Attribute* attr = attrs.find(key);
  if (!attr || !attr->value.is_number()) return std::nullopt;
  return attr->value.get<double>();
}

bool boolAttr(const OpAttributes& attrs, const char* key) {
  const Attribute* attr = attrs.find(key);
  return attr && attr->value.is_boolean() && attr->value.get<bool>();
}

// formats::quantize reports misuse with std::invalid_argument; callers of the
// model expect GoldenError only.
void roundTo(DataFormat df, std::span<float> values) {
  try {
    formats::quantize(df, values);
  } catch (const std::invalid_argument& e) {
    throw GoldenError(e.what());
  }
}
void roundTo(DataFormat df, Tensor& t) { roundTo(df, std::span<float>(t.data)); }

void requireInputs(const OpSpec& spec, std::span<const Tensor> inputs, size_t count) {
  if (inputs.size() < count)
    fail(spec, "needs " + std::to_string(count) + " input(s), got " + std::to_string(inputs.size()));
}

// a*b as the multiplier computes it (a in srcA, b in srcB), with the phases
// of the fidelity worked out once for a whole tensor.
struct Multiplier {
  Phases p;
  explicit Multiplier(MathFidelity f) : p(phasesOf(f)) {}
  float operator()(float a, float b) const;
  [[gnu::always_inline]] static float hifi3(float a, float b);
};

// ---------------------------------------------------------------- unary
enum class UnaryKind {
  Identity, Exp, Log, Sqrt, Reciprocal, Gelu, GeluDerivative, Sigmoid, Tanh, Abs, Sine, Cosine, Square, Power, LRelu, Relu
};

struct Unary {
  UnaryKind kind = UnaryKind::Identity;
  double param = 0.0; // power: exponent, lrelu: slope
};

std::optional<UnaryKind> unaryKindOf(const std::string& type) {
  static const std::pair<const char*, UnaryKind> kKinds[] = {
      {"nop", UnaryKind::Identity},
      {"datacopy", UnaryKind::Identity},
      {"ethernet_datacopy", UnaryKind::Identity},
      {"exp", UnaryKind::Exp},
      {"log", UnaryKind::Log},
      {"sqrt", UnaryKind::Sqrt},
      {"reciprocal", UnaryKind::Reciprocal},
      {"gelu", UnaryKind::Gelu},
      {"gelu_derivative", UnaryKind::GeluDerivative},
      {"sigmoid", UnaryKind::Sigmoid},
      {"tanh", UnaryKind::Tanh},
      {"abs", UnaryKind::Abs},
      {"sine", UnaryKind::Sine},
      {"cosine", UnaryKind::Cosine},
      {"square", UnaryKind::Square},
      {"power", UnaryKind::Power},
      {"lrelu", UnaryKind::LRelu},
      {"relu", UnaryKind::Relu},
      {"dropout", UnaryKind::Identity}, // p = 0 only (makeUnary)
  };
  for (const auto& [name, kind] : kKinds)
    if (type == name) return kind;
  return std::nullopt;
}

Unary makeUnary(const std::string& type, const OpAttributes& attrs) {
  std::optional<UnaryKind> kind = unaryKindOf(type);
  if (!kind) throw GoldenError("unsupported unary op type '" + type + "'");
  Unary u{*kind, 0.0};
  if (u.kind == UnaryKind::Power) {
    std::optional<double> e = numberAttr(attrs, "exp");
    if (!e || *e < 0 || *e != std::floor(*e))
      throw GoldenError("power needs a non-negative integer attribute 'exp'");
    u.param = *e;
  } else if (type == "dropout") {
    // Which values the device drops depends on its SFPU random generator;
    // nothing public pins it, so only p = 0 (keep everything, scale 1) is modelled.
    std::optional<double> p = numberAttr(attrs, "p");
    if (p && *p != 0.0)
      throw GoldenError("dropout with p = " + std::to_string(*p) +
                        " drops values at random; the reference model only models p = 0 (the default: identity)");
  } else if (u.kind == UnaryKind::LRelu) {
    std::optional<double> slope = numberAttr(attrs, "slope");
    if (!slope) throw GoldenError("lrelu needs the attribute 'slope'");
    u.param = *slope;
  }
  return u;
}

// sqrt(2/pi): the tanh approximation of gelu, as BUDA's golden uses.
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794; // 1/sqrt(2*pi)

float expClamped(float x) { return std::min(std::numeric_limits<float>::max(), std::exp(x)); }

float applyUnary(const Unary& u, float x) {
  switch (u.kind) {
  case UnaryKind::Identity: return x;
  case UnaryKind::Exp: return expClamped(x);
  // BUDA's golden nudges 0 to epsilon so neither gives an infinity.
  case UnaryKind::Log: return x == 0.0f ? std::log(std::numeric_limits<float>::epsilon()) : std::log(x);
  case UnaryKind::Sqrt: return std::sqrt(x);
  case UnaryKind::Reciprocal: return x == 0.0f ? 1.0f / std::numeric_limits<float>::epsilon() : 1.0f / x;
  case UnaryKind::Gelu: {
    const double d = x;
    return static_cast<float>(0.5 * d * (1.0 + std::tanh(kSqrt2OverPi * (d + 0.044715 * d * d * d))));
  }
  case UnaryKind::GeluDerivative: {
    const double d = x;
    const double cdfPart = 0.5 * (1.0 + std::tanh(kSqrt2OverPi * (d + 0.044715 * d * d * d)));
    const double pdfPart = d * std::exp(-0.5 * d * d) * kInvSqrt2Pi;
    return static_cast<float>(cdfPart + pdfPart);
  }
  case UnaryKind::Sigmoid: return static_cast<float>(1.0 / (1.0 + static_cast<double>(expClamped(-x))));
  case UnaryKind::Tanh: return std::tanh(x);
  case UnaryKind::Abs: return std::fabs(x);
  case UnaryKind::Sine: return std::sin(x);
  case UnaryKind::Cosine: return std::cos(x);
  case UnaryKind::Square: return x * x;
  case UnaryKind::Power: {
    // Repeated float multiplication, as the SFPU loop does.
    float result = 1.0f;
    for (int64_t i = 0; i < static_cast<int64_t>(u.param); ++i) result *= x;
    return result;
  }
  case UnaryKind::LRelu: return x > 0.0f ? x : x * static_cast<float>(u.param);
  case UnaryKind::Relu: return x > 0.0f ? x : 0.0f;
  }
  return x;
}

// ---------------------------------------------------------------- binary
enum class BinaryKind { Add, Subtract, Multiply, Maximum };

std::optional<BinaryKind> binaryKindOf(const std::string& type) {
  if (type == "add") return BinaryKind::Add;
  if (type == "subtract") return BinaryKind::Subtract;
  if (type == "multiply") return BinaryKind::Multiply;
  if (type == "maximum") return BinaryKind::Maximum;
  return std::nullopt;
}

// A zero operand gives zero even against inf/NaN: the FPU multiplier has no
// special values, and BUDA's golden masks the same way.
float multiplyMasked(float a, float b) {
  const float product = a * b;
  // +0 when either is zero, as a bit mask: loops over it vectorize.
  const uint32_t keep = static_cast<uint32_t>((a == 0.0f) | (b == 0.0f)) - 1u;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(product) & keep);
}

// Inline: eltwise multiply loops over it vectorize (a call per value does not).
inline float Multiplier::hifi3(float a, float b) {
  // All phases but A_lo*B_lo.
  const float bHigh = highB(b);
  return multiplyMasked(a, bHigh) + multiplyMasked(highA(a), b - bHigh);
}

float Multiplier::operator()(float a, float b) const {
  if (p.aLowBHigh && p.aHighBLow && !p.aLowBLow) return hifi3(a, b);
  return multiplyMasked(p.aLowBHigh ? a : highA(a), p.aHighBLow ? b : highB(b));
}

float applyBinary(BinaryKind kind, float a, float b) {
  switch (kind) {
  case BinaryKind::Add: return a + b;
  case BinaryKind::Subtract: return a - b;
  case BinaryKind::Multiply: return multiplyMasked(a, b);
  case BinaryKind::Maximum: return a > b ? a : b;
  }
  return a;
}

// ---------------------------------------------------------------- relu
// relu_en on any op: min mode keeps values >= threshold (others 0); max mode
// clamps to [0, threshold]. Comparisons as in BUDA's tile library.
void applyRelu(const OpAttributes& attrs, Tensor& t) {
  if (!attrs.relu.value) return;
  const float threshold = static_cast<float>(attrs.reluThreshold.present() ? attrs.reluThreshold.value : 0.0);
  const bool maxMode = attrs.reluMode.present() && attrs.reluMode.value == "max";
  for (float& v : t.data) {
    if (maxMode)
      v = v >= threshold ? threshold : (v >= 0.0f ? v : 0.0f);
    else
      v = v >= threshold ? v : 0.0f;
  }
}

// ---------------------------------------------------------------- matmul
bool isIntegerMatmul(const OpSpec& spec) {
  for (DataFormat df : spec.inDf)
    if (netlist::isIntegerFormat(df)) return true;
  return netlist::isIntegerFormat(spec.intermedDf);
}

// OpSpec::sharedWeights where it applies: the dense matmul, its partial
// sums not in place.
bool sharesWeights(const OpSpec& spec) {
  return spec.sharedWeights && spec.type == "matmul" && !spec.partialsInPlace && !attrsOf(spec).identity.value;
}

Tensor evalMatmul(const OpSpec& spec, std::span<const Tensor> inputs) {
  const OpAttributes& attrs = attrsOf(spec);
  requireInputs(spec, inputs, 2);
  const Tensor& in0 = inputs[0];
  const Tensor& in1 = inputs[1];
  const bool shared = sharesWeights(spec) && in1.w == 1;  // in1's one entry serves every w
  if ((in0.w != in1.w && !shared) || in0.z != in1.z || in0.c != in1.r)
    fail(spec, "matmul inputs do not fit: " + shapeText(in0) + " x " + shapeText(in1) +
                   " (needs equal w and z, input0 cols == input1 rows)");
  const int64_t m = in0.r, k = in0.c, n = in1.c;
  const int64_t kTiles = k / kTile;
  const int64_t mK = attrs.mK.present() ? attrs.mK.value : 1;
  const int64_t uKt = attrs.uKt.present() ? attrs.uKt.value : kTiles;
  if (mK < 1 || uKt < 1 || mK * uKt != kTiles)
    fail(spec, "m_k " + std::to_string(mK) + " x u_kt " + std::to_string(uKt) + " must equal the inner dimension of " +
                   std::to_string(kTiles) + " tiles");
  const int64_t blockCols = uKt * kTile;

  // accumulate sums groups of `z` consecutive t slices (all of them when z is absent).
  int64_t zGroup = 1;
  if (attrs.accumulate.value) {
    zGroup = attrs.z.present() && attrs.z.value > 0 ? attrs.z.value : in0.z;
    if (in0.z % zGroup != 0)
      fail(spec, "accumulate over z=" + std::to_string(zGroup) + " needs input t divisible by it, got t=" +
                     std::to_string(in0.z));
  }
  const int64_t outZ = in0.z / zGroup;

  const bool integer = isIntegerMatmul(spec);
  ProductTerms terms(spec.fidelity, integer);

  const int64_t chainLength = zGroup * mK;
  // In place (OpSpec::partialsInPlace): entry w * chainLength + step holds
  // partial sum `step` of input w; each starts from zero.
  const bool inPlace = spec.partialsInPlace;
  const Attribute* sfpuAttr = attrs.find("sfpu_op");
  const bool sfpuOp = sfpuAttr && sfpuAttr->value.is_string() && sfpuAttr->value.get<std::string>() != "invalid";
  if (inPlace && (boolAttr(attrs, "requant") || boolAttr(attrs, "dequant") || sfpuOp))
    fail(spec, "partial sums added in place cannot take requant, dequant or sfpu_op (they need the whole sum)");
  Tensor out(in0.w * (inPlace ? chainLength : 1), outZ, m, n);
  // The device adds one tile's product to dest per instruction (u_kt of them
  // per block) and rounds dest to its format after each: with a dest
  // narrower than Float32 the product is computed tile by tile and rounded
  // in between. (A Float32 dest only flushes denormals, done once at the end;
  // integer sums are exact.)
  const DataFormat dest = destFormatOf(spec.accDf);
  const bool roundToDest = spec.roundOutput;
  const bool perTile = roundToDest && !integer && dest != DataFormat::Float32;
  const int64_t stepCols = perTile ? kTile : blockCols;
  const auto roundAcc = [&](DataFormat df, float* acc) { roundTo(df, std::span<float>(acc, static_cast<size_t>(m * n))); };
  // Partial sums leave dest for the intermediate buffer after every m_k block
  // (and every accumulated t slice) except the last, so they are rounded there
  // (and to the dest format again when they come back).
  // The 16-bit dest's kernel takes B packed into column strips: packed once
  // per slice, and once for all entries when they share one weight matrix.
  thread_local PackedTerms packed;
  // Between m_k blocks the kernel's partial sums are already rounded to dest:
  // an intermed_df equal to dest rounds nothing more there (rounding is
  // idempotent), so the blocks are one call over every tile.
  const bool wholeK = perTile && !inPlace && spec.intermedDf == dest;
  for (int64_t w = 0; w < in0.w; ++w) {
    for (int64_t zo = 0; zo < outZ; ++zo) {
      float* acc = out.matrix(inPlace ? w * chainLength : w, zo);
      int64_t step = 0;
      for (int64_t zi = 0; zi < zGroup; ++zi) {
        const int64_t z = zo * zGroup + zi;
        const bool rhsAsBefore = shared && in1.z == 1 && w > 0;
        const auto pairs = terms.slice(in0.matrix(w, z), static_cast<size_t>(m * k), in1.matrix(shared ? 0 : w, z),
                                       static_cast<size_t>(k * n), rhsAsBefore);
        const float* lhsOf[2];
        size_t count = 0;
        if (perTile) {
          const float* rhsOf[2];
          for (const auto& [lhs, rhs] : pairs) {
            lhsOf[count] = lhs;
            rhsOf[count++] = rhs;
          }
          if (!rhsAsBefore) packed.pack(std::span<const float* const>(rhsOf, count), n, k, n);
          if (wholeK && gemmTilesPacked(acc, m, std::span<const float* const>(lhsOf, count), k, packed, 0, kTiles, dest))
            continue;
        }
        for (int64_t block = 0; block < mK; ++block) {
          if (inPlace) acc = out.matrix(w * chainLength + step, zo);
          // A 16-bit dest: the per-tile kernel, in the device's summation
          // order (gemm_tiles.cpp). Otherwise Eigen, a panel of output rows
          // at a time, so the partial sums stay in cache between the tile
          // products and their rounding.
          if (perTile &&
              gemmTilesPacked(acc, m, std::span<const float* const>(lhsOf, count), k, packed, block * uKt, uKt, dest)) {
            // The kernel left every value rounded to dest: rounding to the
            // same format again changes no bit (it is idempotent), so only
            // another intermed_df costs a pass.
            if (++step < chainLength && !inPlace && spec.intermedDf != dest) {
              roundAcc(spec.intermedDf, acc);
              roundAcc(dest, acc);
            }
            continue;
          }
          const int64_t panel = perTile ? kPanelRows : m;
          for (int64_t r0 = 0; r0 < m; r0 += panel) {
            const int64_t rows = std::min(panel, m - r0);
            float* part = acc + r0 * n;
            for (int64_t kc = block * blockCols; kc < (block + 1) * blockCols; kc += stepCols) {
              for (const auto& [lhs, rhs] : pairs)
                gemmAccumulate(part, lhs + r0 * k + kc, k, rhs + kc * n, n, rows, stepCols, n);
              if (perTile) roundTo(dest, std::span<float>(part, static_cast<size_t>(rows * n)));
            }
          }
          if (++step < chainLength && !inPlace) {
            roundAcc(spec.intermedDf, acc);
            if (perTile && spec.intermedDf != dest) roundAcc(dest, acc);
          }
        }
      }
    }
  }

  // The result sits in dest, in its format, while bias, requant and a fused
  // unary are applied to it; each of these writes dest again.
  if (roundToDest && !perTile) roundTo(dest, out);

  size_t nextInput = 2;
  if (attrs.bias.value) {
    requireInputs(spec, inputs, 3);
    const Tensor& bias = inputs[nextInput++];
    // The float kernel adds bias with a row broadcast: row 0 of each bias tile
    // serves every row of that tile (int kernels add it element-wise).
    // (In place: only the last partial sum of each input, with whose block
    // the kernel adds it.)
    const int64_t perInput = inPlace ? chainLength : 1;
    if (!(inPlace ? bias.w == in0.w && bias.z == out.z && bias.r == out.r && bias.c == out.c : bias.sameShape(out)))
      fail(spec, "bias " + shapeText(bias) + " must have the matmul output's shape " + shapeText(out));
    for (int64_t w = perInput - 1; w < out.w; w += perInput)
      for (int64_t z = 0; z < out.z; ++z)
        for (int64_t r = 0; r < out.r; ++r) {
          const float* biasRow = valuePtr(bias, w / perInput, z, integer ? r : r - r % kTile, 0);
          float* outRow = &out.at(w, z, r, 0);
          for (int64_t c = 0; c < out.c; ++c) outRow[c] += biasRow[c];
        }
    if (roundToDest) roundTo(dest, out);
  }

  const bool requant = boolAttr(attrs, "requant");
  const bool dequant = boolAttr(attrs, "dequant");
  if (requant || dequant) {
    requireInputs(spec, inputs, nextInput + 1);
    const Tensor& scale = inputs[nextInput];
    if (!scale.sameShape(out))
      fail(spec, "scale input " + shapeText(scale) + " must have the matmul output's shape " + shapeText(out));
    const float zeroPoint = static_cast<float>(attrs.zeroPoint.present() ? attrs.zeroPoint.value : 0.0);
    for (size_t i = 0; i < out.data.size(); ++i)
      out.data[i] = requant ? out.data[i] * scale.data[i] + zeroPoint : (out.data[i] + zeroPoint) * scale.data[i];
  }

  // A unary fused into the matmul kernel (BUDA: sfpu_op: gelu).
  // `invalid` is BUDA's spelling of "no sfpu op" (its default value).
  if (const Attribute* sfpu = attrs.find("sfpu_op");
      sfpu && sfpu->value.is_string() && sfpu->value.get<std::string>() != "invalid") {
    Unary u;
    try {
      u = makeUnary(sfpu->value.get<std::string>(), attrs);
    } catch (const GoldenError& e) {
      fail(spec, std::string("sfpu_op: ") + e.what());
    }
    for (float& v : out.data) v = applyUnary(u, v);
    if (roundToDest) roundTo(dest, out);
  }
  return out;
}

// ---------------------------------------------------------------- reduce
Tensor evalReduce(const OpSpec& spec, const Tensor& in) {
  const OpAttributes& attrs = attrsOf(spec);
  const std::string& type = attrs.reduceType.value;
  const std::string& dim = attrs.reduceDim.value;
  if (type != "sum" && type != "max" && type != "avg")
    fail(spec, "reduce type must be sum, max or avg, got '" + type + "'");
  const bool isMax = type == "max";
  const float init = isMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  auto combine = [isMax](float acc, float v) { return isMax ? (v > acc ? v : acc) : acc + v; };

  if (dim == "r" || dim == "c" || dim == "rc") {
    // The result lands in row 0 (r), column 0 (c) or [0][0] (rc) of a single
    // output tile row/column; the rest of that tile is zero.
    const bool overRows = dim != "c", overCols = dim != "r";
    Tensor out(in.w, in.z, overRows ? kTile : in.r, overCols ? kTile : in.c);
    const float scale = type == "avg" ? 1.0f / static_cast<float>((overRows ? in.r : 1) * (overCols ? in.c : 1)) : 1.0f;
    // r and c as the device reduces (docs/device-model.md, REDUCE): one tile
    // of the reduced dimension per instruction, in index order, each adding
    // x * scale to the running sum in dest (max: max(x), then * scale), and
    // dest rounded to its format after every tile. (For sums the scale is
    // 1, or for avg a power of two when the extent is one; 1/N otherwise,
    // which the device applies per term.)
    const DataFormat dest = destFormatOf(spec.accDf);
    const bool perTile = spec.roundOutput && !netlist::isIntegerFormat(dest) && dest != DataFormat::Float32;
    auto add = [&](float acc, float v) { return isMax ? (v > acc ? v : acc) : acc + v * scale; };
    const float finalScale = isMax ? scale : 1.0f;
    for (int64_t w = 0; w < in.w; ++w)
      for (int64_t z = 0; z < in.z; ++z) {
        if (overRows && !overCols) {
          std::vector<float> acc(static_cast<size_t>(in.c), init);
          for (int64_t r = 0; r < in.r; ++r) {
            for (int64_t c = 0; c < in.c; ++c) acc[c] = add(acc[c], in.at(w, z, r, c));
            if (perTile && r % kTile == kTile - 1) roundTo(dest, std::span<float>(acc));
          }
          for (int64_t c = 0; c < in.c; ++c) out.at(w, z, 0, c) = acc[c] * finalScale;
        } else if (overCols && !overRows) {
          for (int64_t r = 0; r < in.r; ++r) {
            float acc = init;
            for (int64_t c = 0; c < in.c; ++c) {
              acc = add(acc, in.at(w, z, r, c));
              if (perTile && c % kTile == kTile - 1) roundTo(dest, std::span<float>(&acc, 1));
            }
            out.at(w, z, r, 0) = acc * finalScale;
          }
        } else {
          float acc = init;
          for (int64_t r = 0; r < in.r; ++r)
            for (int64_t c = 0; c < in.c; ++c) acc = combine(acc, in.at(w, z, r, c));
          out.at(w, z, 0, 0) = acc * scale;
        }
      }
    return out;
  }
  if (dim == "z") {
    const int64_t group = attrs.z.present() && attrs.z.value > 0 ? attrs.z.value : in.z;
    if (in.z % group != 0)
      fail(spec, "reduce over z=" + std::to_string(group) + " needs input t divisible by it, got t=" + std::to_string(in.z));
    Tensor out(in.w, in.z / group, in.r, in.c);
    const size_t plane = static_cast<size_t>(in.r * in.c);
    for (int64_t w = 0; w < in.w; ++w)
      for (int64_t zo = 0; zo < out.z; ++zo) {
        float* acc = out.matrix(w, zo);
        std::copy_n(in.matrix(w, zo * group), plane, acc);
        for (int64_t zi = 1; zi < group; ++zi) {
          // The running result spills to the intermediate buffer between slices.
          roundTo(spec.intermedDf, std::span<float>(acc, plane));
          const float* src = in.matrix(w, zo * group + zi);
          for (size_t i = 0; i < plane; ++i) acc[i] = combine(acc[i], src[i]);
        }
        if (type == "avg")
          for (size_t i = 0; i < plane; ++i) acc[i] /= static_cast<float>(group);
      }
    return out;
  }
  fail(spec, "reduce dim must be r, c, rc or z, got '" + dim + "'");
}

// ---------------------------------------------------------------- dispatch
using SpecialFn = Tensor (*)(const OpSpec&, std::span<const Tensor>);

SpecialFn specialOpFor(const std::string& type) {
  static const std::pair<const char*, SpecialFn> kSpecial[] = {
      {"splice", evalSplice},
      {"depthwise", evalDepthwise},
      {"embedding", evalEmbedding},
      {"tilizer", evalTilizer},
      {"topk", evalTopk},
      {"quantization", evalQuantization},
      {"dequantization", evalDequantization},
      {"requantization", evalRequantization},
  };
  for (const auto& [name, fn] : kSpecial)
    if (type == name) return fn;
  return nullptr;
}

// `roundDest`: also round the result to the dest format (what evalOp would
// do next), a cache-sized chunk at a time while it is still in cache; then
// `destRounded` is set.
Tensor evalEltwiseBinary(const OpSpec& spec, BinaryKind kind, std::span<const Tensor> inputs, bool roundDest,
                         bool& destRounded) {
  requireInputs(spec, inputs, 2);
  const Tensor& a = inputs[0];
  const Tensor& b = inputs[1];
  if (!a.sameShape(b)) fail(spec, "input shapes differ: " + shapeText(a) + " vs " + shapeText(b));
  // Every value is appended once (not zero-filled first: the fill and its
  // page faults cost as much as the operation).
  Tensor out = Tensor::reserved(a.w, a.z, a.r, a.c);
  const DataFormat dest = destFormatOf(spec.accDf);
  // One loop per operation, in fixed runs of 16 through local copies: the
  // form -O2 vectorizes (the per-value operation is the same).
  auto each = [&](auto fn) {
    constexpr size_t kChunk = 4096; // 16 KB: stays in L1 until rounded
    float chunk[kChunk];
    const size_t total = a.data.size();
    for (size_t start = 0; start < total; start += kChunk) {
      const size_t n = std::min(kChunk, total - start);
      const float* pa = a.data.data() + start;
      const float* pb = b.data.data() + start;
      float* po = chunk;
      size_t i = 0;
      for (; i + 16 <= n; i += 16) {
        float x[16], y[16], z[16];
        std::memcpy(x, pa + i, sizeof x);
        std::memcpy(y, pb + i, sizeof y);
        for (size_t j = 0; j < 16; ++j) z[j] = fn(x[j], y[j]);
        std::memcpy(po + i, z, sizeof z);
      }
      for (; i < n; ++i) po[i] = fn(pa[i], pb[i]);
      if (roundDest) roundTo(dest, std::span<float>(po, n));
      out.data.insert(out.data.end(), po, po + n);
    }
    destRounded = roundDest;
  };
  switch (kind) {
  case BinaryKind::Multiply: {
    // input0 is unpacked to srcA, input1 to srcB.
    const Phases p = phasesOf(spec.fidelity);
    if (p.aLowBHigh && p.aHighBLow && !p.aLowBLow)
      each([](float x, float y) { return Multiplier::hifi3(x, y); });
    else if (p.aLowBHigh && p.aHighBLow)
      each([](float x, float y) { return multiplyMasked(x, y); });
    else if (p.aLowBHigh) // srcB reduced
      each([](float x, float y) { return multiplyMasked(x, highB(y)); });
    else if (p.aHighBLow) // srcA reduced
      each([](float x, float y) { return multiplyMasked(highA(x), y); });
    else
      each([](float x, float y) { return multiplyMasked(highA(x), highB(y)); });
    break;
  }
  case BinaryKind::Add: each([](float x, float y) { return applyBinary(BinaryKind::Add, x, y); }); break;
  case BinaryKind::Subtract: each([](float x, float y) { return applyBinary(BinaryKind::Subtract, x, y); }); break;
  case BinaryKind::Maximum: each([](float x, float y) { return applyBinary(BinaryKind::Maximum, x, y); }); break;
  }
  return out;
}

Tensor evalEltwiseUnary(const OpSpec& spec, const Unary& u, std::span<const Tensor> inputs) {
  requireInputs(spec, inputs, 1);
  Tensor out = inputs[0];
  if (u.kind != UnaryKind::Identity) {
    // The kernel copies the input into dest (rounding it to the dest format)
    // and runs the SFPU there: the function sees the rounded value. (evalOp
    // rounds the result; for a copy that is the only rounding.)
    if (spec.roundOutput) roundTo(destFormatOf(spec.accDf), out);
    for (float& v : out.data) v = applyUnary(u, v);
  }
  return out;
}

// Ops whose result the kernel writes into dest (rounded to its format) and
// the packer reads from there; matmul rounds itself (before bias and sfpu_op).
bool resultInDest(const std::string& type) {
  return type == "reduce" || binaryKindOf(type) || unaryKindOf(type);
}

// `destRounded`: set when the op has already rounded its result to the dest
// format (evalOp then skips that pass).
Tensor compute(const OpSpec& spec, std::span<const Tensor> inputs, bool& destRounded) {
  const std::string& type = spec.type;
  if (type == "matmul") {
    // evalOp has rounded the inputs (compute's only caller).
    if (attrsOf(spec).identity.value) return detail::evalSparseMatmul(spec, inputs, true);
    return evalMatmul(spec, inputs);
  }
  if (type == "reduce") {
    requireInputs(spec, inputs, 1);
    return evalReduce(spec, inputs[0]);
  }
  if (std::optional<BinaryKind> kind = binaryKindOf(type))
    return evalEltwiseBinary(spec, *kind, inputs, spec.roundOutput, destRounded);
  if (unaryKindOf(type)) {
    try {
      return evalEltwiseUnary(spec, makeUnary(type, attrsOf(spec)), inputs);
    } catch (const GoldenError& e) {
      fail(spec, e.what());
    }
  }
  if (SpecialFn fn = specialOpFor(type)) return fn(spec, inputs);
  fail(spec, "the reference model does not implement this op type");
}

} // namespace

// True when rounding `values` to `df` changes no bit (formats::isQuantized:
// a read-only pass for the float formats).
bool detail::representable(DataFormat df, std::span<const float> values) {
  try {
    return formats::isQuantized(df, values);
  } catch (const std::invalid_argument& e) {
    throw GoldenError(e.what());
  }
}

// ---------------------------------------------------------------- public API
DataFormat destFormatOf(DataFormat accDf) {
  if (accDf == DataFormat::Float32 || accDf == DataFormat::Float16 || accDf == DataFormat::Float16_b) return accDf;
  if (netlist::isIntegerFormat(accDf)) return DataFormat::Int32;
  // Block formats (BUDA accepts acc_df: Bfp8_b) accumulate in the 16-bit
  // float of their exponent family.
  return netlist::isExponentBFormat(accDf) || netlist::isRawFormat(accDf) ? DataFormat::Float16_b
                                                                          : DataFormat::Float16;
}

float fidelityOperandA(MathFidelity f, float x) {
  const Phases p = phasesOf(f);
  return p.aLowBHigh ? x : highA(x);
}

float fidelityOperandB(MathFidelity f, float x) {
  const Phases p = phasesOf(f);
  return p.aHighBLow ? x : highB(x);
}

float fidelityMultiply(MathFidelity f, float a, float b) { return Multiplier(f)(a, b); }

float unaryScalar(const std::string& type, const netlist::OpAttributes& attrs, float x) {
  return applyUnary(makeUnary(type, attrs), x);
}

float binaryScalar(const std::string& type, float a, float b) {
  std::optional<BinaryKind> kind = binaryKindOf(type);
  if (!kind) throw GoldenError("unsupported binary op type '" + type + "'");
  return applyBinary(*kind, a, b);
}

bool isSupportedOpType(const std::string& type) {
  return type == "matmul" || type == "reduce" || binaryKindOf(type) || unaryKindOf(type) || specialOpFor(type);
}

void detail::preferHeapForLargeTensors() {
#if defined(__GLIBC__)
  // glibc serves every allocation above 32 MB (its largest mmap threshold)
  // from a fresh mmap and unmaps it on free, so each whole-epoch tensor
  // (hundreds of MB with a w-stacked input_count) is paid again in page
  // faults and kernel zeroing on first touch: a third of the CPU time of the
  // BERT and ResNet corpus netlists. From the heap, freed blocks are reused.
  // Free memory at the heap's top is returned only beyond 2 GB (INT_MAX, the
  // most mallopt takes; at 1 GB YOLO still spent 10 s in the kernel).
  // One arena for every thread (loader -j): a thread's own arena grows in
  // 64 MB mmap'd heaps that cannot hold these tensors, so its large blocks
  // would not be reused either.
  static const bool done = [] {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    mallopt(M_ARENA_MAX, 1);
    return true;
  }();
  (void)done;
  // Free blocks inside the heap are not trimmed (an epoch's tensors of
  // varied sizes leave holes the next ones do not fit). Once the heap is a
  // third of the machine's memory, holes beyond 4 GB go back to the system:
  // the heap then holds at most that much more than the live tensors (U-Net
  // grew to 22 GB without this). Below that size holes are kept: returning
  // them costs page faults when they are reused (YOLO: 11 s of 60).
#if __GLIBC_PREREQ(2, 33)
  constexpr size_t kMaxFreeHeap = size_t{4} << 30;
  static const size_t kBigHeap = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && pageSize > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(pageSize) / 3 : kMaxFreeHeap;
  }();
  const struct mallinfo2 heap = mallinfo2();
  if (heap.fordblks > kMaxFreeHeap && heap.arena > kBigHeap) malloc_trim(0);
#endif
#endif
}

void accumulateGradient(Tensor& cell, const Tensor& results, DataFormat cellDf) {
  if (cell.w != 1 || results.z != cell.z || results.r != cell.r || results.c != cell.c)
    throw GoldenError("gradient accumulation: results " + shapeText(results) + " do not fit the cell " +
                      shapeText(cell));
  const size_t n = cell.size();
  for (int64_t w = 0; w < results.w; ++w) {
    const float* e = results.data.data() + static_cast<size_t>(w) * n;
    for (size_t i = 0; i < n; ++i) cell.data[i] += e[i];
    roundTo(cellDf, cell);
  }
}

Tensor evalOp(const OpSpec& spec, std::span<const Tensor> inputs) {
  detail::preferHeapForLargeTensors();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    if (in.w != inputs[0].w && !(i == 1 && in.w == 1 && sharesWeights(spec)))
      fail(spec, "inputs disagree on the number of entries: " + shapeText(inputs[0]) + " vs " + shapeText(in));
    if (in.r % kTile != 0 || in.c % kTile != 0) fail(spec, "input " + shapeText(in) + " is not whole tiles");
  }

  // The unpacker delivers each input in its in_df. Inputs usually come from
  // a queue or op already stored in that format: then the (multi-GB, for
  // w-stacked weights) copy is skipped.
  std::vector<Tensor> rounded;
  bool changes = false;
  for (size_t i = 0; i < inputs.size() && i < spec.inDf.size() && !changes; ++i)
    changes = spec.roundsInput(i) && !representable(spec.inDf[i], inputs[i].data);
  if (changes) {
    rounded.assign(inputs.begin(), inputs.end());
    for (size_t i = 0; i < rounded.size() && i < spec.inDf.size(); ++i)
      if (spec.roundsInput(i)) roundTo(spec.inDf[i], rounded[i]);
    inputs = rounded;
  }
  // splice copies tiles through dest: rounding its inputs to the dest format
  // is rounding each copied value there, before evalSplice packs them.
  if (spec.roundOutput && spec.type == "splice") {
    const DataFormat dest = destFormatOf(spec.accDf);
    bool destChanges = false;
    for (size_t i = 0; i < inputs.size() && !destChanges; ++i) destChanges = !representable(dest, inputs[i].data);
    if (destChanges) {
      if (rounded.empty()) rounded.assign(inputs.begin(), inputs.end());
      for (Tensor& t : rounded) roundTo(dest, t);
      inputs = rounded;
    }
  }

  bool destRounded = false;
  Tensor out = compute(spec, inputs, destRounded);

  // (In place: one entry per partial sum; evalMatmul checked the count.)
  const int64_t w = inputs.empty() ? 1 : inputs[0].w;
  const bool entriesOk = spec.partialsInPlace ? out.w % std::max<int64_t>(w, 1) == 0 : out.w == w;
  if (!entriesOk || out.z != spec.t || out.r != spec.rowTiles() * kTile || out.c != spec.colTiles() * kTile)
    fail(spec, "computed output " + shapeText(out) + " does not match the op's blocking [w=" + std::to_string(w) +
                   ", z=" + std::to_string(spec.t) + ", " + std::to_string(spec.rowTiles() * kTile) + "x" +
                   std::to_string(spec.colTiles() * kTile) + "]");

  const OpAttributes& attrs = attrsOf(spec);
  // The result sits in dest (its format) before the packer, which applies
  // relu to the dest value and converts to out_df: a value just below the
  // relu threshold that rounds up to it in dest is kept, and a Bfp out_df
  // rounds values that dest rounded already.
  const DataFormat dest = destFormatOf(spec.accDf);
  const bool inDest = spec.roundOutput && resultInDest(spec.type);
  if (inDest && !destRounded) roundTo(dest, out);
  applyRelu(attrs, out);
  if (spec.roundOutput) {
    // A requantizing matmul always packs Int8, whatever out_df says.
    const bool requant = spec.type == "matmul" && boolAttr(attrs, "requant");
    const DataFormat packed = requant ? DataFormat::Int8 : spec.outDf;
    // Rounding to a float format is idempotent: when out_df is the dest
    // format just rounded to, and relu moved no value, the pass is skipped.
    const bool rounded = inDest && !attrs.relu.value && packed == dest && !netlist::isIntegerFormat(dest);
    if (!rounded) roundTo(packed, out);
  }
  return out;
}

OpSpec specOf(const netlist::Op& op, netlist::Arch arch) {
  OpSpec s;
  s.name = op.name;
  s.type = op.type.value;
  s.attrs = &op.attributes;
  s.t = op.t.present() ? op.t.value : 1;
  s.grid = op.gridSize.value;
  s.mblock = op.mblock.value;
  s.ublock = op.ublock.value;
  s.ublockOrder = op.order();
  for (const auto& df : op.inDf) s.inDf.push_back(df.value);
  s.outDf = op.outDf.value;
  s.accDf = op.accDf.present() ? op.accDf.value : op.outDf.value;
  s.intermedDf = op.intermedDf.present() ? op.intermedDf.value : op.outDf.value;
  s.fidelity = op.mathFidelity.present() ? op.mathFidelity.value : MathFidelity::HiFi4;
  s.arch = arch;
  return s;
}

} // namespace tessera::golden
