// Output comparison with BUDA's semantics (verif_comparison.cpp of the BUDA
// backend): AllClose and AllCloseHw judge every 32x32 tile on its own; a value
// is close when |e - a| <= atol + rtol * max(|e|, |a|); AllCloseHw also needs
// the tile's Pearson correlation. docs/comparison.md has the details and the
// places where we knowingly differ from BUDA.
#include "compare/compare.hpp"

#include "netlist/test_config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace tessera::compare {
namespace {

using netlist::ComparisonConfig;
using netlist::ExtraField;

// BUDA's tt::constants defaults, used for fields a comparison-config omits.
constexpr double kDefaultAtol = 1e-3;
constexpr double kDefaultRtol = 1e-4;
constexpr double kDefaultPct = 1.0;
constexpr double kDefaultPcc = 0.999;
constexpr int64_t kTile = formats::kTileDim;
constexpr size_t kMaxReported = 8;

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// BUDA matches the type case-insensitively.
Method parseMethod(const std::string& type) {
  std::string t = lower(type);
  if (t == "exact") return Method::Exact;
  if (t == "allclose") return Method::AllClose;
  if (t == "allclosehw") return Method::AllCloseHw;
  throw std::invalid_argument("comparison-config: type: unknown comparison type '" + type +
                              "' (expected Exact, AllClose or AllCloseHw)");
}


void applyFields(Config& c, const ComparisonConfig& cc) {
  if (cc.type.present()) c.method = parseMethod(cc.type.value);
  if (cc.atol.present()) c.atol = cc.atol.value;
  if (cc.rtol.present()) c.rtol = cc.rtol.value;
  if (cc.checkPct.present()) c.checkPct = cc.checkPct.value;
  if (cc.checkPcc.present()) c.checkPcc = cc.checkPcc.value;
  if (const auto* f = netlist::findExtra(cc.extra, "check_tile_rows_range")) c.tileRows = netlist::parseTileRange(*f, "comparison-config");
  if (const auto* f = netlist::findExtra(cc.extra, "check_tile_cols_range")) c.tileCols = netlist::parseTileRange(*f, "comparison-config");
}


// Whether the pair counts as matching. NaN matches only NaN. Infinity matches
// an infinity of the same sign, or a finite value of that sign at least 2^126
// in magnitude (BUDA's inf_compare: too big to tell from an overflow).
bool close(float e, float a, const Config& cfg) {
  if (cfg.method == Method::Exact) return e == a || (std::isnan(e) && std::isnan(a));
  if (std::isfinite(e) && std::isfinite(a)) [[likely]] {
    const double de = e, da = a;
    return std::fabs(de - da) <= cfg.atol + cfg.rtol * std::max(std::fabs(de), std::fabs(da));
  }
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
  if (std::isinf(e) || std::isinf(a)) {
    if (e == a) return true;
    if (std::signbit(e) != std::signbit(a)) return false;
    float finite = std::isinf(e) ? a : e;
    return std::fabs(finite) >= 0x1p126f;
  }
  double de = e, da = a;
  return std::fabs(de - da) <= cfg.atol + cfg.rtol * std::max(std::fabs(de), std::fabs(da));
}

// PCC input: NaN counts as 0 and infinities as +-FLT_MAX (BUDA's
// nan_to_num/inf_to_num) so one odd value cannot make the figure NaN.
double pccValue(float v) {
  if (std::isnan(v)) return 0.0;
  if (std::isinf(v)) return v > 0 ? std::numeric_limits<float>::max() : -std::numeric_limits<float>::max();
  return v;
}

// Pearson correlation from the moments of a set of pairs. Undefined when a
// side is constant; then, as BUDA does, two constants close to each other
// count as 1, anything else as 0. Each tile's moments are taken about its own
// means (two passes over the tile, so near-constant data does not cancel)
// and tiles merge exactly (Chan et al.'s pairwise update), so the whole
// output's figure needs no pass of its own and no copy.
struct Moments {
  int64_t n = 0;
  double x0 = 0, y0 = 0;  // the first pair: constancy checks
  bool constX = true, constY = true;
  double mx = 0, my = 0;  // means
  double sxx = 0, syy = 0, sxy = 0;  // sums of centred squares / products

  void merge(const Moments& o) {
    if (o.n == 0) return;
    if (n == 0) {
      *this = o;
      return;
    }
    constX = constX && o.constX && o.x0 == x0;
    constY = constY && o.constY && o.y0 == y0;
    const double total = static_cast<double>(n + o.n), dx = o.mx - mx, dy = o.my - my;
    const double f = static_cast<double>(n) * static_cast<double>(o.n) / total;
    sxx += o.sxx + dx * dx * f;
    syy += o.syy + dy * dy * f;
    sxy += o.sxy + dx * dy * f;
    mx += dx * static_cast<double>(o.n) / total;
    my += dy * static_cast<double>(o.n) / total;
    n += o.n;
  }
  double pcc(const Config& cfg) const {
    if (n == 0) return 1.0;
    if (constX && constY) {
      bool near = cfg.method == Method::Exact
                      ? x0 == y0
                      : std::fabs(x0 - y0) <= cfg.atol + cfg.rtol * std::max(std::fabs(x0), std::fabs(y0));
      return near ? 1.0 : 0.0;
    }
    if (constX || constY) return 0.0;
    if (sxx == 0 || syy == 0) return 0.0; // underflowed spread: treat as constant
    return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
  }
};

// BUDA: a threshold of 0 disables the check; otherwise the coefficient must
// have the threshold's sign and at least its magnitude.
bool pccPasses(double pcc, double threshold) {
  if (threshold == 0) return true;
  return threshold > 0 ? pcc >= threshold : pcc <= threshold;
}

std::string fixed(double v, int precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[400]; // fixed notation of DBL_MAX needs 309 digits
  auto r = std::to_chars(buf, buf + sizeof buf, v + 0.0, std::chars_format::fixed, precision); // + 0.0: no "-0"
  return std::string(buf, r.ptr);
}

// Shortest text that reads back as the same float: exact and deterministic.
std::string shortest(float v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string shapeText(const Tensor& t) {
  return "[" + std::to_string(t.w) + "," + std::to_string(t.z) + "," + std::to_string(t.r) + "," +
         std::to_string(t.c) + "]";
}

} // namespace

Config configFor(const netlist::ComparisonConfig& cfg, const std::string& queue) {
  Config c;
  c.atol = kDefaultAtol;
  c.rtol = kDefaultRtol;
  c.checkPct = kDefaultPct;
  c.checkPcc = kDefaultPcc;
  applyFields(c, cfg);
  if (const ComparisonConfig* o = netlist::overrideFor(cfg, queue, "comparison-config")) applyFields(c, *o);
  return c;
}

Result compareTensors(const Tensor& expected, const Tensor& actual, const Config& cfg) {
  Result res;
  if (!expected.sameShape(actual) || expected.size() != actual.size()) {
    res.reason = "shape " + shapeText(expected) + " expected vs " + shapeText(actual) + " actual";
    return res;
  }
  // Plain variables, not structured bindings: clang 14 cannot capture those.
  const auto rows = cfg.tileRows.value_or(std::pair<int64_t, int64_t>{0, kTile});
  const auto cols = cfg.tileCols.value_or(std::pair<int64_t, int64_t>{0, kTile});
  const int64_t r0 = std::clamp<int64_t>(rows.first, 0, kTile), r1 = std::clamp<int64_t>(rows.second, r0, kTile);
  const int64_t c0 = std::clamp<int64_t>(cols.first, 0, kTile), c1 = std::clamp<int64_t>(cols.second, c0, kTile);
  // Whether a row / column is inside the checked range of its tile; values
  // outside it are skipped everywhere. The loops walk rows of the flat data.
  std::vector<char> rowIn(static_cast<size_t>(expected.r)), colIn(static_cast<size_t>(expected.c));
  for (int64_t r = 0; r < expected.r; ++r) rowIn[static_cast<size_t>(r)] = r % kTile >= r0 && r % kTile < r1;
  for (int64_t c = 0; c < expected.c; ++c) colIn[static_cast<size_t>(c)] = c % kTile >= c0 && c % kTile < c1;
  const float* const eData = expected.data.data();
  const float* const aData = actual.data.data();
  auto rowOffset = [&](int64_t w, int64_t z, int64_t r) {
    return static_cast<size_t>(((w * expected.z + z) * expected.r + r) * expected.c);
  };
  auto visitRange = [&](int64_t rBegin, int64_t rEnd, int64_t cBegin, int64_t cEnd, int64_t w, int64_t z, auto&& fn) {
    for (int64_t r = rBegin; r < rEnd; ++r) {
      if (!rowIn[static_cast<size_t>(r)]) continue;
      const float* eRow = eData + rowOffset(w, z, r);
      const float* aRow = aData + rowOffset(w, z, r);
      for (int64_t c = cBegin; c < cEnd; ++c)
        if (colIn[static_cast<size_t>(c)]) fn(r, c, eRow[c], aRow[c]);
    }
  };

  // One pass per 32x32 tile (its values stay in cache for the second): the
  // counts and the largest error, the tile's own judgement (AllClose and
  // AllCloseHw judge each tile, as BUDA does: check_pct of its values close
  // and, for AllCloseHw, its PCC at check_pcc) and its moments, merged into
  // the whole output's PCC.
  Moments all;
  std::string firstFailure;
  const int64_t rowTiles = (expected.r + kTile - 1) / kTile, colTiles = (expected.c + kTile - 1) / kTile;
  for (int64_t w = 0; w < expected.w; ++w)
    for (int64_t z = 0; z < expected.z; ++z)
      for (int64_t tr = 0; tr < rowTiles; ++tr)
        for (int64_t tc = 0; tc < colTiles; ++tc) {
          const int64_t rBegin = tr * kTile, rEnd = std::min(expected.r, rBegin + kTile);
          const int64_t cBegin = tc * kTile, cEnd = std::min(expected.c, cBegin + kTile);
          Moments m;
          double sx = 0, sy = 0;
          int64_t within = 0;
          visitRange(rBegin, rEnd, cBegin, cEnd, w, z, [&](int64_t, int64_t, float e, float a) {
            const bool ok = close(e, a, cfg);
            within += ok ? 1 : 0;
            // A NaN or infinity that does not match the other side is an infinite error.
            const double err = (std::isfinite(e) && std::isfinite(a)) ? std::fabs(static_cast<double>(e) - a)
                               : ok                                   ? 0.0
                                                                      : std::numeric_limits<double>::infinity();
            res.maxAbsError = std::max(res.maxAbsError, err);
            const double x = pccValue(e), y = pccValue(a);
            if (m.n++ == 0) {
              m.x0 = x;
              m.y0 = y;
            }
            m.constX = m.constX && x == m.x0;
            m.constY = m.constY && y == m.y0;
            sx += x;
            sy += y;
          });
          if (m.n == 0) continue;
          m.mx = sx / static_cast<double>(m.n);
          m.my = sy / static_cast<double>(m.n);
          visitRange(rBegin, rEnd, cBegin, cEnd, w, z, [&](int64_t, int64_t, float e, float a) {
            const double dx = pccValue(e) - m.mx, dy = pccValue(a) - m.my;
            m.sxx += dx * dx;
            m.syy += dy * dy;
            m.sxy += dx * dy;
          });
          all.merge(m);
          res.compared += m.n;
          res.mismatches += m.n - within;
          if (cfg.method == Method::Exact) continue;
          ++res.tiles;
          const double pct = static_cast<double>(within) / static_cast<double>(m.n);
          const bool pctOk = pct >= cfg.checkPct;
          const double pcc = cfg.method == Method::AllCloseHw ? m.pcc(cfg) : 1.0;
          const bool pccOk = cfg.method != Method::AllCloseHw || pccPasses(pcc, cfg.checkPcc);
          res.minTilePct = std::min(res.minTilePct, pct);
          res.minTilePcc = std::min(res.minTilePcc, pcc);
          if (pctOk && pccOk) continue;
          if (res.failedTiles++ == 0) {
            firstFailure = "tile [" + std::to_string(w) + "," + std::to_string(z) + "," + std::to_string(tr) + "," +
                           std::to_string(tc) + "]:";
            if (!pctOk) firstFailure += " within " + fixed(pct * 100, 2) + "% < " + fixed(cfg.checkPct * 100, 2) + "%";
            if (!pctOk && !pccOk) firstFailure += ",";
            if (!pccOk)
              firstFailure += " pcc " + fixed(pcc, 5) + (cfg.checkPcc > 0 ? " < " : " > ") + fixed(cfg.checkPcc, 5);
          }
        }
  res.pcc = all.pcc(cfg);
  res.pctWithin = res.compared ? static_cast<double>(res.compared - res.mismatches) / static_cast<double>(res.compared)
                               : 1.0;
  // The first mismatches in row-major order (only when there are any).
  for (int64_t w = 0; w < expected.w && res.mismatches > 0 && res.first.size() < kMaxReported; ++w)
    for (int64_t z = 0; z < expected.z && res.first.size() < kMaxReported; ++z)
      visitRange(0, expected.r, 0, expected.c, w, z, [&](int64_t r, int64_t c, float e, float a) {
        if (res.first.size() < kMaxReported && !close(e, a, cfg)) res.first.push_back({w, z, r, c, e, a});
      });

  if (cfg.method == Method::Exact) {
    res.pass = res.mismatches == 0;
    if (!res.pass)
      res.reason = std::to_string(res.mismatches) + " of " + std::to_string(res.compared) + " values differ";
    return res;
  }
  res.pass = res.failedTiles == 0;
  if (!res.pass)
    res.reason = std::to_string(res.failedTiles) + " of " + std::to_string(res.tiles) + " tiles fail; first " +
                 firstFailure;
  return res;
}

namespace {
// "<indent>mismatch at [w,z,r,c]: expected .. got .." per recorded mismatch.
std::string mismatchLines(const Result& r, const std::string& indent) {
  std::string s;
  for (const auto& m : r.first)
    s += indent + "mismatch at [" + std::to_string(m.w) + "," + std::to_string(m.z) + "," + std::to_string(m.r) + "," +
         std::to_string(m.c) + "]: expected " + shortest(m.expected) + " got " + shortest(m.actual) + "\n";
  return s;
}
} // namespace

std::string formatResult(const std::string& queue, const Result& r) {
  std::string s = queue + ": " + (r.pass ? "PASS" : "FAIL");
  if (!r.pass && r.compared == 0 && !r.reason.empty()) return s + " (" + r.reason + ")\n"; // shape mismatch
  s += " max_abs=" + fixed(r.maxAbsError, 6) + " pcc=" + fixed(r.pcc, 5) + " within=" + fixed(r.pctWithin * 100, 2) +
       "%";
  if (!r.pass && !r.reason.empty()) s += " (" + r.reason + ")";
  s += "\n";
  if (r.pass) return s;
  return s + mismatchLines(r, "  ");
}

std::string formatCheckTable(const std::vector<QueueCheck>& checks) {
  size_t width = 5; // "queue"
  for (const auto& c : checks) width = std::max(width, c.queue.size());
  auto pad = [](std::string s, size_t w, bool right) {
    std::string fill(s.size() < w ? w - s.size() : 0, ' ');
    return right ? fill + s : s + fill;
  };
  const bool chips = std::any_of(checks.begin(), checks.end(), [](const QueueCheck& c) { return c.chip.has_value(); });
  std::string s = pad("queue", width, false) + (chips ? "  chip" : "") + "  entries  result  " + pad("max_abs", 12, true) +
                  "  " + pad("pcc", 9, true) + "  " + pad("within", 8, true) + "\n";
  int passed = 0;
  for (const auto& c : checks) {
    const Result& r = c.result;
    passed += r.pass;
    s += pad(c.queue, width, false) + (chips ? "  " + pad(c.chip ? std::to_string(*c.chip) : "", 4, true) : "") + "  " +
         pad(std::to_string(c.entries), 7, true) + "  " + pad(r.pass ? "PASS" : "FAIL", 6, false) + "  ";
    if (r.compared == 0 && !r.pass) {
      s += "(" + r.reason + ")\n";
      continue;
    }
    s += pad(fixed(r.maxAbsError, 6), 12, true) + "  " + pad(fixed(r.pcc, 5), 9, true) + "  " +
         pad(fixed(r.pctWithin * 100, 2) + "%", 8, true) + "\n";
    if (r.pass) continue;
    if (!r.reason.empty()) s += "    " + r.reason + "\n";
    s += mismatchLines(r, "    ");
  }
  s += "checked " + std::to_string(checks.size()) + (checks.size() == 1 ? " queue: " : " queues: ") +
       std::to_string(passed) + " passed, " + std::to_string(checks.size() - passed) + " failed\n";
  return s;
}

} // namespace tessera::compare
