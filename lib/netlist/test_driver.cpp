#include "netlist/test_driver.hpp"

#include "netlist/shape.hpp"
#include "netlist/test_config.hpp"

#include <algorithm>
#include <cfloat>
#include <filesystem>
#include <string_view>

namespace tessera::netlist {
namespace {

// Driver values are not written anywhere in the netlist; a Field counts as
// present when its location is valid, so they carry this one (diagnostics
// never point at them: the values are valid by construction).
constexpr SourceLoc kDriverLoc{1, 1};

template <class T> Field<T> given(T v) {
  Field<T> f;
  f.set(std::move(v), kDriverLoc);
  return f;
}

StimulusConfig uniform(double lower, double upper) {
  StimulusConfig s;
  s.loc = kDriverLoc;
  s.type = given<std::string>("Uniform");
  s.uniformLowerBound = given(lower);
  s.uniformUpperBound = given(upper);
  return s;
}

StimulusConfig constant(double value) {
  StimulusConfig s;
  s.loc = kDriverLoc;
  s.type = given<std::string>("Constant");
  s.constantValue = given(value);
  return s;
}

ComparisonConfig comparison(const std::string& type, double atol, double rtol, double pcc, double pct) {
  ComparisonConfig c;
  c.loc = kDriverLoc;
  c.type = given(type);
  c.atol = given(atol);
  c.rtol = given(rtol);
  c.checkPcc = given(pcc);
  c.checkPct = given(pct);
  return c;
}

std::vector<TestDriver> makeDrivers() {
  std::vector<TestDriver> d;
  // Outside any upstream test directory: the loader's own defaults.
  d.push_back({"generic", "tessera: no upstream driver (Uniform [-1, 1]; AllCloseHw atol 0.01 rtol 0.15 pcc 0.99 pct 0.5)",
               std::nullopt, std::nullopt});
  {
    // test_tm_main.cpp without flags: DebugTileId(base 0.01, step 0.01);
    // AllClose, atol 0.01, rtol 0.025, check_pcc 0.98, check_pct 0.80.
    StimulusConfig s;
    s.loc = kDriverLoc;
    s.type = given<std::string>("DebugTileId");
    s.debugTileIdBase = given(0.01);
    s.debugTileIdStep = given(0.01);
    d.push_back({"test_tm", "verif/tm_tests/test_tm_main.cpp", s, comparison("AllClose", 0.01, 0.025, 0.98, 0.80)});
    // The same with --randomize (what the TM test generators pass):
    // Normal(0, 1); AllCloseHw, rtol 0.15.
    StimulusConfig n;
    n.loc = kDriverLoc;
    n.type = given<std::string>("Normal");
    n.normalMean = given(0.0);
    n.normalStddev = given(1.0);
    d.push_back({"test_tm_randomize", "verif/tm_tests/test_tm_main.cpp --randomize", n,
                 comparison("AllCloseHw", 0.01, 0.15, 0.98, 0.80)});
  }
  // test_op.cpp reads the netlist's test-config alone (a missing section
  // stops it): the loader's own defaults stand in.
  d.push_back({"test_op", "verif/op_tests/test_op.cpp (no defaults: a missing section stops it)", std::nullopt,
               std::nullopt});
  // test_graph.cpp merges verif/graph_tests/default_test_config.yaml.
  d.push_back({"test_graph", "verif/graph_tests/test_graph.cpp with verif/graph_tests/default_test_config.yaml",
               uniform(-1.0, 1.0), comparison("AllCloseHw", 0.01, 0.15, 0.99, 0.80)});
  // The verif/netlist_tests drivers merge verif/netlist_tests/default_test_config.yaml.
  d.push_back({"netlist_tests",
               "verif/netlist_tests/test_*_pybuda_api.cpp etc. with verif/netlist_tests/default_test_config.yaml",
               uniform(0.001, 2.0), comparison("AllCloseHw", 0.01, 0.15, 0.98, 0.0)});
  // test_inference.cpp: the same file, and constants for queues named
  // *eps*, *mean*, *var*, *sum* (applyTestDriver adds them).
  d.push_back({"test_inference", "verif/netlist_tests/test_inference.cpp with verif/netlist_tests/default_test_config.yaml",
               uniform(0.001, 2.0), comparison("AllCloseHw", 0.01, 0.15, 0.98, 0.0)});
  // test_netlist_program.cpp: every host input is 1.0; it compares nothing,
  // so the loader's comparison defaults judge.
  d.push_back({"test_netlist_program", "loader/tests/test_netlist_program.cpp (compares nothing)", constant(1.0),
               std::nullopt});
  {
    // test_dual_view_ram.cpp: default_test_config.yaml as netlist_tests, its
    // rams `writer` and `reader` written with 0 (every slot) before the run,
    // and the program params it passes with its option defaults: the write
    // index `reader` t / 2 ("some valid write dimension"), the read index 0,
    // one inner and one outer loop, no increments.
    TestDriver dv{"test_dual_view_ram",
                  "verif/netlist_tests/test_dual_view_ram.cpp with verif/netlist_tests/default_test_config.yaml",
                  uniform(0.001, 2.0), comparison("AllCloseHw", 0.01, 0.15, 0.98, 0.0)};
    auto fixed = [](int64_t v) { return [v](const Netlist&) -> std::optional<int64_t> { return v; }; };
    dv.params.push_back({"$p_cache_write", "t of 'reader' / 2", [](const Netlist& nl) -> std::optional<int64_t> {
                           for (const Queue& q : nl.queues)
                             if (q.name == "reader")
                               if (auto shape = queueShape(q)) return shape->t / 2;
                           return std::nullopt;
                         }});
    dv.params.push_back({"$p_cache_read", "", fixed(0)});
    dv.params.push_back({"$p_inner_loop_count", "", fixed(1)});
    dv.params.push_back({"$p_outer_loop_count", "", fixed(1)});
    for (const char* p : {"$p_inner_loop_wr_incr", "$p_outer_loop_wr_incr", "$p_inner_loop_rd_incr",
                          "$p_outer_loop_rd_incr"})
      dv.params.push_back({p, "", fixed(0)});
    dv.zeroed = {"writer", "reader"};
    d.push_back(std::move(dv));
  }
  return d;
}

struct PathRule {
  std::vector<std::string_view> components;
  std::string_view driver;
  std::string_view filePrefix = {}; // non-empty: the file name must start with it
};

// Upstream test directories (repository-relative, as the corpus keeps them)
// and the binary that runs their netlists.
const std::vector<PathRule>& pathRules() {
  static const std::vector<PathRule> rules = {
      {{"verif", "tm_tests"}, "test_tm"},
      {{"verif", "op_tests"}, "test_op"},
      {{"verif", "graph_tests"}, "test_graph"},
      {{"verif", "data_movement"}, "test_graph"},      // ci test lists: test_graph runs them
      {{"verif", "template_netlist"}, "test_graph"},   // generated with test-args for test_graph
      {{"verif", "netlist_tests"}, "netlist_tests"},
      {{"loader", "tests"}, "test_netlist_program"},
      {{"perf_lib"}, "test_inference"},
      // After netlist_tests: at the same depth the later rule wins.
      {{"verif", "netlist_tests"}, "test_dual_view_ram", "netlist_dual_view_ram"},
  };
  return rules;
}

// test_inference.cpp's queue-name constants, in its order (first match wins):
// FLT_EPSILON, 1/sequence_length (test-arg, default 128) twice, 1.0.
void addInferenceNameRules(StimulusConfig& s, const Netlist& nl) {
  double sequenceLength = 128;
  if (nl.testConfig)
    if (const ExtraField* args = findExtra(nl.testConfig->extra, "test-args"); args && args->value.is_object())
      if (auto it = args->value.find("sequence_length"); it != args->value.end() && it->is_number() &&
                                                        it->get<double>() > 0)
        sequenceLength = it->get<double>();
  s.overrides.emplace_back(".*eps.*", constant(FLT_EPSILON));
  s.overrides.emplace_back(".*mean.*", constant(1.0 / sequenceLength));
  s.overrides.emplace_back(".*var.*", constant(1.0 / sequenceLength));
  s.overrides.emplace_back(".*sum.*", constant(1.0));
}

} // namespace

const std::vector<TestDriver>& testDrivers() {
  static const std::vector<TestDriver> drivers = makeDrivers();
  return drivers;
}

const TestDriver* findTestDriver(const std::string& name) {
  for (const auto& d : testDrivers())
    if (d.name == name) return &d;
  return nullptr;
}

const TestDriver& testDriverForPath(const std::string& path) {
  std::vector<std::string> dirs;
  const std::filesystem::path normal = std::filesystem::path(path).lexically_normal();
  for (const auto& part : normal.parent_path()) dirs.push_back(part.string());
  const std::string file = normal.filename().string();
  const PathRule* best = nullptr;
  size_t bestStart = 0;
  for (const auto& rule : pathRules()) {
    if (!file.starts_with(rule.filePrefix)) continue;
    const size_t n = rule.components.size();
    for (size_t start = 0; start + n <= dirs.size(); ++start) {
      bool match = true;
      for (size_t i = 0; i < n && match; ++i) match = dirs[start + i] == rule.components[i];
      if (match && (!best || start >= bestStart)) best = &rule, bestStart = start;
    }
  }
  if (best)
    if (const TestDriver* d = findTestDriver(std::string(best->driver))) return *d;
  return testDrivers().front();
}

AppliedDefaults applyTestDriver(Netlist& nl, const TestDriver& driver) {
  AppliedDefaults applied;
  const bool needStimulus = !(nl.testConfig && nl.testConfig->stimulus) && driver.stimulus;
  const bool needComparison = !(nl.testConfig && nl.testConfig->comparison) && driver.comparison;
  std::vector<std::string> zero;
  for (const auto& name : driver.zeroed)
    for (const Queue& q : nl.queues)
      if (q.name == name) zero.push_back(name);
  if (!needStimulus && !needComparison && zero.empty()) return applied;
  if (!nl.testConfig) nl.testConfig.emplace();
  if (needStimulus) {
    StimulusConfig s = *driver.stimulus;
    if (driver.name == "test_inference") addInferenceNameRules(s, nl);
    nl.testConfig->stimulus = std::move(s);
    applied.stimulus = true;
  }
  if (!zero.empty()) {
    if (!nl.testConfig->stimulus) { // a driver without a stimulus section: the loader's default stays the base
      nl.testConfig->stimulus.emplace();
      nl.testConfig->stimulus->loc = kDriverLoc;
    }
    auto& overrides = nl.testConfig->stimulus->overrides;
    for (const auto& name : zero) {
      const bool named = std::any_of(overrides.begin(), overrides.end(), [&](const auto& o) { return o.first == name; });
      if (named) continue;
      // An exact name wins over every regex key, wherever it stands.
      overrides.emplace_back(name, constant(0.0));
      applied.zeroed.push_back(name);
    }
  }
  if (needComparison) {
    nl.testConfig->comparison = *driver.comparison;
    applied.comparison = true;
  }
  return applied;
}

std::vector<std::pair<const TestDriver::Param*, int64_t>> driverParams(const TestDriver& driver, const Netlist& nl) {
  std::vector<std::pair<const TestDriver::Param*, int64_t>> out;
  for (const auto& p : driver.params)
    if (auto v = p.value(nl)) out.emplace_back(&p, *v);
  return out;
}

} // namespace tessera::netlist
