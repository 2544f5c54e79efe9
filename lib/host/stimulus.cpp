// Host input generation. The type names and fields are BUDA's
// (verif_stimulus.cpp of the BUDA backend); the random numbers are ours, made
// reproducible across compilers: std::mt19937_64 is fully specified by the
// standard, but its distributions are not, so the transforms are written here.
// docs/stimulus.md has the details.
#include "host/stimulus.hpp"

#include "netlist/test_config.hpp"
#include "support/hashing.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>

namespace tessera::host {
namespace {

using netlist::ExtraField;
using netlist::Field;
using netlist::StimulusConfig;

constexpr int64_t kTile = formats::kTileDim;

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}


// The override's field when it has one, else the base's (null when neither).
template <class T> const Field<T>* pick(const Field<T>& base, const Field<T>* over) {
  if (over && over->present()) return over;
  return base.present() ? &base : nullptr;
}


StimulusKind parseKind(const std::string& type, const std::string& queue) {
  std::string t = lower(type);
  if (t == "uniform") return StimulusKind::Uniform;
  if (t == "normal") return StimulusKind::Normal;
  if (t == "constant") return StimulusKind::Constant;
  if (t == "step") return StimulusKind::Step;
  if (t == "steprowwise") return StimulusKind::StepRowwise;
  if (t == "debugtileid") return StimulusKind::DebugTileId;
  if (t == "sparse") return StimulusKind::SparseTiles;
  if (t == "sparse_encoding") return StimulusKind::SparseEncoding;
  if (t == "sparse_encoding_nz_counts")
    throw std::invalid_argument("stimulus type " + type + " is not supported (queue '" + queue + "')");
  throw std::invalid_argument("stimulus-config: type: unknown stimulus type '" + type + "' for queue '" + queue +
                              "' (expected Uniform, Normal, Constant, Step, StepRowwise, DebugTileId, sparse or sparse_encoding)");
}

// Uniform in [0, 1) from the top 53 bits: every double of the form k * 2^-53.
double unit(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1p-53; }

// Box-Muller; both values of each pair are used, in order (cos, then sin).
class NormalSource {
public:
  explicit NormalSource(std::mt19937_64& g) : g_(g) {}
  double next() {
    if (haveSpare_) {
      haveSpare_ = false;
      return spare_;
    }
    double u1 = static_cast<double>((g_() >> 11) + 1) * 0x1p-53; // (0, 1]: log stays finite
    double u2 = unit(g_);
    double radius = std::sqrt(-2.0 * std::log(u1));
    double angle = 2.0 * std::numbers::pi * u2;
    spare_ = radius * std::sin(angle);
    haveSpare_ = true;
    return radius * std::cos(angle);
  }

private:
  std::mt19937_64& g_;
  double spare_ = 0;
  bool haveSpare_ = false;
};

} // namespace

uint64_t entrySeed(uint64_t seed, const std::string& queue, int64_t entry) {
  return splitmix64(splitmix64(splitmix64(seed) ^ support::Fnv1a64::of(queue)) ^ static_cast<uint64_t>(entry));
}

Stimulus stimulusFor(const netlist::StimulusConfig* cfg, const std::string& queue) {
  Stimulus s;
  if (!cfg) return s;
  const StimulusConfig* o = netlist::overrideFor(*cfg, queue, "stimulus-config");
  auto value = [&](Field<double> StimulusConfig::*member, double fallback) {
    const Field<double>* f = pick(cfg->*member, o ? &(o->*member) : nullptr);
    return f ? f->value : fallback;
  };
  // No type anywhere: BUDA would stop; we take the default Uniform.
  if (const Field<std::string>* type = pick(cfg->type, o ? &o->type : nullptr)) s.kind = parseKind(type->value, queue);
  s.lower = value(&StimulusConfig::uniformLowerBound, s.lower);
  s.upper = value(&StimulusConfig::uniformUpperBound, s.upper);
  s.mean = value(&StimulusConfig::normalMean, s.mean);
  s.stddev = value(&StimulusConfig::normalStddev, s.stddev);
  s.constant = value(&StimulusConfig::constantValue, s.constant);
  s.stepStart = value(&StimulusConfig::stepStart, s.stepStart);
  s.stepIncrement = value(&StimulusConfig::stepIncrement, s.stepIncrement);
  s.tileIdBase = value(&StimulusConfig::debugTileIdBase, s.tileIdBase);
  s.tileIdStep = value(&StimulusConfig::debugTileIdStep, s.tileIdStep);
  auto range = [&](const std::string& key) -> const ExtraField* {
    if (o)
      if (const ExtraField* f = netlist::findExtra(o->extra, key)) return f;
    return netlist::findExtra(cfg->extra, key);
  };
  if (const ExtraField* f = range("set_tile_rows")) s.tileRows = netlist::parseTileRange(*f, "stimulus-config");
  if (const ExtraField* f = range("set_tile_cols")) s.tileCols = netlist::parseTileRange(*f, "stimulus-config");
  if (const ExtraField* f = range("matmul_ident_name"); f && f->value.is_string())
    s.matmulIdentName = f->value.get<std::string>();
  auto number = [&](const std::string& key, double fallback) {
    const ExtraField* f = range(key);
    if (!f) return fallback;
    if (!f->value.is_number())
      throw std::invalid_argument("stimulus-config: " + key + " must be a number (queue '" + queue + "')");
    return f->value.get<double>();
  };
  s.encoding.zeroStrip = number("zero_strip_freq", s.encoding.zeroStrip);
  s.encoding.zeroUblock = number("zero_ublock_freq", s.encoding.zeroUblock);
  s.encoding.zeroTile = number("zero_tile_freq", s.encoding.zeroTile);
  s.encoding.tileBytes = static_cast<int64_t>(number("enc_tile_byte_size", static_cast<double>(s.encoding.tileBytes)));
  if ((s.kind == StimulusKind::SparseTiles || s.kind == StimulusKind::SparseEncoding) && s.matmulIdentName.empty())
    throw std::invalid_argument("stimulus-config: type sparse/sparse_encoding needs matmul_ident_name (queue '" +
                                queue + "')");

  if (s.kind == StimulusKind::Uniform && !(s.lower <= s.upper))
    throw std::invalid_argument("stimulus-config: uniform_lower_bound " + std::to_string(s.lower) +
                                " is above uniform_upper_bound " + std::to_string(s.upper) + " for queue '" + queue +
                                "'");
  if (s.kind == StimulusKind::Normal && !(s.stddev >= 0))
    throw std::invalid_argument("stimulus-config: normal_stddev " + std::to_string(s.stddev) +
                                " is negative for queue '" + queue + "'");
  return s;
}

void bindSparse(Stimulus& s, const netlist::Netlist& nl, const std::string& queue) {
  if (s.kind == StimulusKind::SparseTiles || s.kind == StimulusKind::SparseEncoding) {
    const netlist::Op* op = findOp(nl, s.matmulIdentName);
    if (!op || op->type.value != "matmul" || !op->attributes.identity.value)
      throw std::invalid_argument("stimulus-config: matmul_ident_name '" + s.matmulIdentName + "' of queue '" + queue +
                                  "' is not a matmul with identity: true");
    s.sparseOp = sparseOpShape(nl, *op);
    return;
  }
  const netlist::Op* tiles = sparseConsumer(nl, queue, 0);
  const netlist::Op* encoding = sparseConsumer(nl, queue, 2);
  if (!tiles && !encoding) return;
  try {
    s.sparseOp = sparseOpShape(nl, tiles ? *tiles : *encoding);
  } catch (const std::invalid_argument&) {
    return; // not enough attributes to build one: the generic stimulus stays
  }
  s.kind = tiles ? StimulusKind::SparseTiles : StimulusKind::SparseEncoding;
  s.matmulIdentName = s.sparseOp->opName;
  s.adaptiveEncoding = true;
}

Tensor generateEntry(const Stimulus& s, int64_t t, int64_t rows, int64_t cols, uint64_t seed,
                     const std::string& queue, int64_t entry) {
  std::mt19937_64 gen(entrySeed(seed, queue, entry));
  if (s.kind == StimulusKind::SparseTiles || s.kind == StimulusKind::SparseEncoding) {
    if (!s.sparseOp)
      throw std::invalid_argument("stimulus for queue '" + queue + "' is sparse but not bound to its matmul (bindSparse)");
    return s.kind == StimulusKind::SparseTiles
               ? generateSparseTiles(*s.sparseOp, t, rows, cols, gen)
               : generateSparseEncoding(*s.sparseOp, s.encoding, s.adaptiveEncoding, t, rows, cols, gen);
  }
  // Every value appended in row-major order (0 where the stimulus sets
  // none): a large entry is not zero-filled first.
  Tensor out = Tensor::reserved(1, t, rows, cols);
  NormalSource normal(gen);
  auto [r0, r1] = s.tileRows.value_or(std::pair<int64_t, int64_t>{0, kTile});
  auto [c0, c1] = s.tileCols.value_or(std::pair<int64_t, int64_t>{0, kTile});
  int64_t colTiles = (cols + kTile - 1) / kTile, rowTiles = (rows + kTile - 1) / kTile;
  for (int64_t z = 0; z < t; ++z)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        // BUDA's DebugTileId fills whole tiles; the others only the set rows/cols.
        if (s.kind != StimulusKind::DebugTileId) {
          int64_t tr = r % kTile, tc = c % kTile;
          if (tr < r0 || tr >= r1 || tc < c0 || tc >= c1) {
            out.data.push_back(0.0f);
            continue;
          }
        }
        double v = 0;
        switch (s.kind) {
        case StimulusKind::Uniform: v = s.lower + (s.upper - s.lower) * unit(gen); break;
        case StimulusKind::Normal: v = s.mean + s.stddev * normal.next(); break;
        case StimulusKind::Constant: v = s.constant; break;
        case StimulusKind::Step:
          v = s.stepStart + s.stepIncrement * static_cast<double>((z * rows + r) * cols + c);
          break;
        case StimulusKind::StepRowwise: v = s.stepStart + s.stepIncrement * static_cast<double>(c); break;
        case StimulusKind::DebugTileId:
          // Tiles numbered row-major over [t][row tile][col tile] within the entry.
          v = s.tileIdBase + s.tileIdStep * static_cast<double>((z * rowTiles + r / kTile) * colTiles + c / kTile);
          break;
        case StimulusKind::SparseTiles:
        case StimulusKind::SparseEncoding: break; // handled above
        }
        out.data.push_back(static_cast<float>(v));
      }
  return out;
}

} // namespace tessera::host
