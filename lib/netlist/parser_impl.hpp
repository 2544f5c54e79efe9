// The netlist parser class, private to lib/netlist: parser.cpp reads the
// top level, queues, graphs, ops and fused ops; parser_programs.cpp reads
// programs and test-config.
#pragma once

#include "netlist/parser.hpp"

#include "netlist/text.hpp"
#include "support/yaml.hpp"

#include <cmath>
#include <functional>
#include <set>
#include <string>

namespace tessera::netlist::parse_detail {

// Short text of a node for messages: the scalar itself, or its kind.
std::string describe(const yaml::Node& n);

class Parser {
public:
  explicit Parser(DiagnosticEngine& d) : d_(d) {}

  std::optional<Netlist> run(const yaml::Node& root);

private:
  DiagnosticEngine& d_;
  size_t rawBudget_ = 2'000'000; // YAML nodes we may copy into raw values in total

  // ------------------------------------------------------------ generic helpers
  static SourceLoc valueLoc(const yaml::Node& key, const yaml::Node& value) {
    SourceLoc l = locOf(value);
    return l.valid() ? l : locOf(key);
  }

  void typeError(SourceLoc loc, const std::string& element, const std::string& field, const std::string& expected,
                 const yaml::Node& got) {
    d_.error("field-type", loc,
             element + ": field '" + field + "' must be " + expected + ", got " + describe(got));
  }

  // Iterates the pairs of a map with string keys, warning about repeated keys
  // (later ones are applied after earlier ones, as the BUDA backend does).
  void forEachPair(const yaml::Node& map, const std::string& element,
                   const std::function<void(const std::string&, const yaml::Node&, const yaml::Node&)>& fn,
                   bool warnDuplicates = true) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const yaml::Node& k = it->first;
      if (!k.IsScalar()) {
        d_.error("field-type", locOf(k), element + ": keys must be plain names, got " + describe(k));
        continue;
      }
      const std::string& key = k.Scalar();
      if (warnDuplicates && !seen.insert(key).second)
        d_.warning("duplicate-key", locOf(k), element + ": key '" + key + "' appears more than once; the later value is used");
      fn(key, k, it->second);
    }
  }

  bool expectMap(const yaml::Node& v, SourceLoc loc, const std::string& element, const std::string& field) {
    if (v.IsMap()) return true;
    typeError(loc, element, field, "a map", v);
    return false;
  }

  std::optional<int64_t> toInt(const yaml::Node& v, SourceLoc loc, const std::string& element,
                               const std::string& field) {
    if (v.IsScalar())
      if (auto i = parseInt64(v.Scalar())) return i;
    typeError(loc, element, field, "an integer", v);
    return std::nullopt;
  }

  std::optional<double> toReal(const yaml::Node& v, SourceLoc loc, const std::string& element,
                               const std::string& field) {
    if (v.IsScalar())
      if (auto r = parseReal(v.Scalar())) return r;
    typeError(loc, element, field, "a number", v);
    return std::nullopt;
  }

  std::optional<bool> toBool(const yaml::Node& v, SourceLoc loc, const std::string& element,
                             const std::string& field) {
    if (v.IsScalar())
      if (auto b = parseBool(v.Scalar())) return b;
    typeError(loc, element, field, "true or false", v);
    return std::nullopt;
  }

  std::optional<std::string> toString(const yaml::Node& v, SourceLoc loc, const std::string& element,
                                      const std::string& field) {
    if (v.IsScalar()) return v.Scalar();
    typeError(loc, element, field, "a name", v);
    return std::nullopt;
  }

  std::optional<Dim2> toDim2(const yaml::Node& v, SourceLoc loc, const std::string& element,
                             const std::string& field) {
    if (v.IsSequence() && v.size() == 2 && v[0].IsScalar() && v[1].IsScalar()) {
      auto r = parseInt64(v[0].Scalar());
      auto c = parseInt64(v[1].Scalar());
      if (r && c) return Dim2{*r, *c};
    }
    typeError(loc, element, field, "a pair [rows, cols] of integers", v);
    return std::nullopt;
  }

  template <class E>
  std::optional<E> toEnum(const yaml::Node& v, SourceLoc loc, const std::string& element, const std::string& field,
                          std::optional<E> (*parse)(std::string_view), const char* allowed) {
    if (v.IsScalar()) {
      if (auto e = parse(v.Scalar())) return e;
      d_.error("field-value", loc,
               element + ": unknown " + field + " " + quote(v.Scalar()) + " (expected one of " + allowed + ")");
      return std::nullopt;
    }
    typeError(loc, element, field, std::string("one of ") + allowed, v);
    return std::nullopt;
  }

  static constexpr const char* kDataFormats =
      "Float32, Float16, Float16_b, Bfp8, Bfp8_b, Bfp4, Bfp4_b, Bfp2, Bfp2_b, Lf8, Fp8_e4m3, Int8, Int32, UInt8, "
      "UInt16, RawUInt8, RawUInt16, RawUInt32";

  template <class T, class Conv>
  void setField(Field<T>& f, const yaml::Node& k, const yaml::Node& v, Conv conv) {
    SourceLoc loc = valueLoc(k, v);
    if (auto x = conv(v, loc)) f.set(std::move(*x), loc);
  }

  void intField(Field<int64_t>& f, const yaml::Node& k, const yaml::Node& v, const std::string& element) {
    setField(f, k, v, [&](auto& n, SourceLoc l) { return toInt(n, l, element, k.Scalar()); });
  }
  void boolField(Field<bool>& f, const yaml::Node& k, const yaml::Node& v, const std::string& element) {
    setField(f, k, v, [&](auto& n, SourceLoc l) { return toBool(n, l, element, k.Scalar()); });
  }
  void dimField(Field<Dim2>& f, const yaml::Node& k, const yaml::Node& v, const std::string& element) {
    setField(f, k, v, [&](auto& n, SourceLoc l) { return toDim2(n, l, element, k.Scalar()); });
  }
  void stringField(Field<std::string>& f, const yaml::Node& k, const yaml::Node& v, const std::string& element) {
    setField(f, k, v, [&](auto& n, SourceLoc l) { return toString(n, l, element, k.Scalar()); });
  }
  void formatField(Field<DataFormat>& f, const yaml::Node& k, const yaml::Node& v, const std::string& element) {
    setField(f, k, v, [&](auto& n, SourceLoc l) {
      return toEnum<DataFormat>(n, l, element, "data format", parseDataFormat, kDataFormats);
    });
  }
  void orderField(Field<UblockOrder>& f, const yaml::Node& k, const yaml::Node& v, const std::string& element) {
    setField(f, k, v, [&](auto& n, SourceLoc l) {
      return toEnum<UblockOrder>(n, l, element, "ublock_order", parseUblockOrder, "r, c");
    });
  }

  ExtraField extraField(const std::string& key, const yaml::Node& k, const yaml::Node& v) {
    return ExtraField{key, locOf(k), yamlToJson(v, rawBudget_)};
  }

  void unknownField(std::vector<ExtraField>& extra, const std::string& element, const std::string& key,
                    const yaml::Node& k, const yaml::Node& v) {
    d_.warning("unknown-field", locOf(k), element + ": unknown field '" + key + "' (kept as data)");
    extra.push_back(extraField(key, k, v));
  }

  // Required keys must be written; a key written with a bad value already has
  // its own field-type error, so it is not also reported as missing.
  void requireKeys(const yaml::Node& map, SourceLoc loc, const std::string& element,
                   std::initializer_list<const char*> keys) {
    for (const char* key : keys)
      if (!map[key].IsDefined()) d_.error("missing-field", loc, element + ": missing required field '" + key + "'");
  }

  // ------------------------------------------------------------ sections
  void parseDevices(const yaml::Node& k, const yaml::Node& v, Netlist& nl);
  void parseQueue(const std::string& name, const yaml::Node& k, const yaml::Node& v, Netlist& nl);
  std::vector<AllocAddress> parseAllocations(const yaml::Node& k, const yaml::Node& v, const std::string& element,
                                             bool host);
  void parseGraph(const std::string& name, const yaml::Node& k, const yaml::Node& v, Netlist& nl);
  void parseOp(Op& op, const yaml::Node& v);
  std::vector<Tm> parseTms(const yaml::Node& k, const yaml::Node& v, const std::string& element);
  std::optional<Pad> parsePad(const yaml::Node& k, const yaml::Node& v, const std::string& element, bool unpad);
  void parseAttributes(OpAttributes& attrs, const yaml::Node& k, const yaml::Node& v, const std::string& element);
  // Handles `input_N_tms`, `input_N_pad`, `input_N_unpad`; false when `key` is none of them.
  bool parseOperandField(const std::string& key, const yaml::Node& k, const yaml::Node& v,
                         std::vector<Operand>& inputs, const std::string& element);
  void parseFusedOps(const yaml::Node& k, const yaml::Node& v, Netlist& nl);
  void parseFusedSubOp(FusedSubOp& sub, const yaml::Node& v, const std::string& element);
  void parsePrograms(const yaml::Node& k, const yaml::Node& v, Netlist& nl);
  void parseInstruction(Program& prog, const yaml::Node& item);
  std::optional<Operand64> parseOperand64(const yaml::Node& v, SourceLoc loc, const std::string& element,
                                          const std::string& field, bool allowBool);
  void parseExecute(Instruction& ins, const yaml::Node& k, const yaml::Node& v, const std::string& element);
  void parseTestConfig(const yaml::Node& k, const yaml::Node& v, Netlist& nl);
  ComparisonConfig parseComparison(const yaml::Node& k, const yaml::Node& v, const std::string& element,
                                   bool allowOverrides);
  StimulusConfig parseStimulus(const yaml::Node& k, const yaml::Node& v, const std::string& element,
                               bool allowOverrides);
};

} // namespace tessera::netlist::parse_detail
