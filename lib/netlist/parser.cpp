#include "netlist/parser_impl.hpp"

namespace tessera::netlist::parse_detail {

// Short text of a node for messages: the scalar itself, or its kind.
std::string describe(const yaml::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsScalar()) {
    std::string s = n.Scalar();
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return quote(s);
  }
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "an unknown value";
}

// ====================================================================== top level
std::optional<Netlist> Parser::run(const yaml::Node& root) {
  if (isNullScalar(root)) {
    d_.error("netlist-structure", {1, 1}, "netlist is empty: expected the sections devices, queues, graphs and programs");
    return std::nullopt;
  }
  if (!root.IsMap()) {
    d_.error("netlist-structure", locOf(root), "netlist must be a map of sections, got " + describe(root));
    return std::nullopt;
  }
  Netlist nl;
  // A repeated section replaces the earlier one (as the BUDA backend's YAML
  // loader does): only the last occurrence of each key is read.
  std::map<std::string, size_t> lastOccurrence;
  size_t position = 0;
  for (auto it = root.begin(); it != root.end(); ++it)
    if (it->first.IsScalar()) lastOccurrence[it->first.Scalar()] = position++; // forEachPair visits scalar keys only
  position = 0;
  forEachPair(root, "netlist", [&](const std::string& key, const yaml::Node& k, const yaml::Node& v) {
    if (lastOccurrence[key] != position++) return;
    if (key == "devices") {
      parseDevices(k, v, nl);
    } else if (key == "queues") {
      if (isNullScalar(v)) return;
      if (expectMap(v, valueLoc(k, v), "netlist", "queues"))
        forEachPair(v, "queues", [&](const std::string& name, const yaml::Node& qk, const yaml::Node& qv) {
          parseQueue(name, qk, qv, nl);
        }, false);
    } else if (key == "graphs") {
      if (isNullScalar(v)) return;
      if (expectMap(v, valueLoc(k, v), "netlist", "graphs"))
        forEachPair(v, "graphs", [&](const std::string& name, const yaml::Node& gk, const yaml::Node& gv) {
          parseGraph(name, gk, gv, nl);
        }, false);
    } else if (key == "fused_ops") {
      parseFusedOps(k, v, nl);
    } else if (key == "programs") {
      parsePrograms(k, v, nl);
    } else if (key == "test-config") {
      parseTestConfig(k, v, nl);
    } else if (key == "performance-check") {
      nl.performanceCheck = extraField(key, k, v);
      nl.perfCheck = parsePerfCheck(k, v, d_);
    } else {
      // Backends may add their own sections (netlist spec, "Optional Sections"): keep them.
      nl.extra.push_back(extraField(key, k, v));
    }
  });
  requireKeys(root, {1, 1}, "netlist", {"devices", "queues", "graphs", "programs"});
  return nl;
}

void Parser::parseDevices(const yaml::Node& k, const yaml::Node& v, Netlist& nl) {
  nl.devices.loc = locOf(k);
  if (!expectMap(v, valueLoc(k, v), "devices", "devices")) return;
  forEachPair(v, "devices", [&](const std::string& key, const yaml::Node& dk, const yaml::Node& dv) {
    if (key != "arch") {
      d_.warning("unknown-field", locOf(dk), "devices: unknown field '" + key + "' (ignored)");
      return;
    }
    nl.devices.arch.clear();
    auto addArch = [&](const yaml::Node& n) {
      SourceLoc loc = valueLoc(dk, n);
      if (auto a = toEnum<Arch>(n, loc, "devices", "arch", parseArch, "grayskull, wormhole, wormhole_b0, blackhole"))
        nl.devices.arch.push_back({*a, loc});
    };
    if (dv.IsSequence()) {
      nl.devices.archWasList = true;
      for (const auto& item : dv) addArch(item);
      if (dv.size() == 0) d_.error("field-value", valueLoc(dk, dv), "devices: arch list is empty");
    } else {
      addArch(dv);
    }
  });
  if (nl.devices.arch.empty() && v.IsMap() && !v["arch"])
    d_.error("missing-field", locOf(k), "devices: missing required field 'arch'");
}

// ====================================================================== queues
std::vector<AllocAddress> Parser::parseAllocations(const yaml::Node& k, const yaml::Node& v,
                                                   const std::string& element, bool host) {
  std::vector<AllocAddress> out;
  const std::string field = host ? "host" : "dram";
  const std::string shape = host ? "a list of [memory, address] pairs or addresses" : "a list of [channel, address] pairs";
  if (!v.IsSequence()) {
    typeError(valueLoc(k, v), element, field, shape, v);
    return out;
  }
  for (const auto& item : v) {
    SourceLoc loc = valueLoc(k, item);
    if (item.IsSequence() && item.size() == 2 && item[0].IsScalar() && item[1].IsScalar()) {
      auto ch = parseInt64(item[0].Scalar());
      auto addr = parseUInt64(item[1].Scalar());
      if (ch && addr) {
        out.push_back({*ch, *addr, loc});
        continue;
      }
    } else if (host && item.IsScalar()) {
      // Older netlists give host queues a bare address.
      if (auto addr = parseUInt64(item.Scalar())) {
        out.push_back({0, *addr, loc});
        continue;
      }
    }
    typeError(loc, element, field, shape + " (addresses up to 64 bits, decimal or 0x hex)", item);
  }
  return out;
}

void Parser::parseQueue(const std::string& name, const yaml::Node& k, const yaml::Node& v, Netlist& nl) {
  Queue q;
  q.name = name;
  q.loc = locOf(k);
  const std::string element = "queue " + quote(name);
  if (!expectMap(v, valueLoc(k, v), element, "definition")) return;
  forEachPair(v, element, [&](const std::string& key, const yaml::Node& fk, const yaml::Node& fv) {
    if (key == "input") stringField(q.input, fk, fv, element);
    else if (key == "type")
      setField(q.type, fk, fv, [&](auto& n, SourceLoc l) { return toEnum<IoType>(n, l, element, "type", parseIoType, "queue, ram"); });
    else if (key == "entries") intField(q.entries, fk, fv, element);
    else if (key == "grid_size") dimField(q.gridSize, fk, fv, element);
    else if (key == "t") intField(q.t, fk, fv, element);
    else if (key == "mblock") dimField(q.mblock, fk, fv, element);
    else if (key == "ublock") dimField(q.ublock, fk, fv, element);
    else if (key == "ublock_order") orderField(q.ublockOrder, fk, fv, element);
    else if (key == "df") formatField(q.df, fk, fv, element);
    else if (key == "target_device") intField(q.targetDevice, fk, fv, element);
    else if (key == "loc")
      setField(q.location, fk, fv, [&](auto& n, SourceLoc l) { return toEnum<IoLocation>(n, l, element, "loc", parseIoLocation, "dram, host"); });
    else if (key == "dram") {
      q.dramLoc = valueLoc(fk, fv);
      q.dram = parseAllocations(fk, fv, element, false);
    } else if (key == "host") {
      q.hostLoc = valueLoc(fk, fv);
      q.host = parseAllocations(fk, fv, element, true);
    } else if (key == "alias") stringField(q.alias, fk, fv, element);
    else if (key == "layout") stringField(q.layout, fk, fv, element);
    else if (key == "tile_dim") dimField(q.tileDim, fk, fv, element);
    else if (key == "input_tms") {
      q.inputTmsLoc = valueLoc(fk, fv);
      q.inputTms = parseTms(fk, fv, element);
    } else unknownField(q.extra, element, key, fk, fv);
  });
  requireKeys(v, q.loc, element,
              {"input", "type", "entries", "grid_size", "t", "mblock", "ublock", "df", "target_device", "loc"});
  nl.queues.push_back(std::move(q));
}

// ====================================================================== TMs
std::vector<Tm> Parser::parseTms(const yaml::Node& k, const yaml::Node& v, const std::string& element) {
  std::vector<Tm> tms;
  const std::string field = k.Scalar();
  if (isNullScalar(v)) return tms; // `input_0_tms:` and `input_0_tms: None` mean no TMs
  if (!v.IsSequence()) {
    typeError(valueLoc(k, v), element, field, "a list of TMs", v);
    return tms;
  }
  for (const auto& item : v) {
    SourceLoc loc = valueLoc(k, item);
    std::string kindName;
    yaml::Node arg;
    if (item.IsScalar()) {
      kindName = item.Scalar();
    } else if (item.IsMap() && item.size() == 1) {
      auto it = item.begin();
      if (it->first.IsScalar()) kindName = it->first.Scalar();
      arg = it->second;
    } else {
      d_.error("tm-syntax", loc, element + ": " + field + ": each TM must be a name or a single `name: argument` pair, got " + describe(item));
      continue;
    }
    auto kind = parseTmKind(kindName);
    if (!kind) {
      d_.error("tm-syntax", loc, element + ": " + field + ": unknown TM " + quote(kindName) +
                                     " (expected broadcast, tile_broadcast, hslice, hstack, vslice, vstack, transpose or pad)");
      continue;
    }
    Tm tm;
    tm.kind = *kind;
    tm.loc = loc;
    auto bad = [&](const std::string& expected) {
      d_.error("tm-syntax", loc, element + ": " + field + ": " + kindName + " takes " + expected + ", got " + describe(arg));
    };
    switch (*kind) {
    case TmKind::Transpose:
      if (arg.IsDefined() && !isNullScalar(arg)) {
        bad("no argument");
        continue;
      }
      break;
    case TmKind::Broadcast: {
      if (!arg.IsMap() || arg.size() != 1 || !arg.begin()->first.IsScalar()) {
        bad("one `{r|c|z: factor}` map");
        continue;
      }
      std::string dim = arg.begin()->first.Scalar();
      auto factor = arg.begin()->second.IsScalar() ? parseInt64(arg.begin()->second.Scalar()) : std::nullopt;
      if ((dim != "r" && dim != "c" && dim != "z") || !factor) {
        bad("one `{r|c|z: factor}` map");
        continue;
      }
      tm.dim = dim[0];
      tm.factor = *factor;
      break;
    }
    case TmKind::Pad: {
      // pad: [rt, ct, pad_value] — tiles appended at the bottom / right.
      std::optional<int64_t> rt, ct;
      std::optional<double> value;
      if (arg.IsSequence() && arg.size() == 3 && arg[0].IsScalar() && arg[1].IsScalar() && arg[2].IsScalar()) {
        rt = parseInt64(arg[0].Scalar());
        ct = parseInt64(arg[1].Scalar());
        value = parseReal(arg[2].Scalar());
      }
      if (!rt || !ct || !value) {
        bad("[rt, ct, pad_value]");
        continue;
      }
      tm.pad = Pad{*rt, *ct, *value, loc};
      break;
    }
    case TmKind::TileBroadcast: {
      std::string dim = arg.IsScalar() ? arg.Scalar() : "";
      if (dim != "r" && dim != "c") {
        bad("r or c");
        continue;
      }
      tm.dim = dim[0];
      break;
    }
    default: {
      auto factor = arg.IsScalar() ? parseInt64(arg.Scalar()) : std::nullopt;
      if (!factor) {
        bad("an integer factor");
        continue;
      }
      tm.factor = *factor;
    }
    }
    tms.push_back(tm);
  }
  return tms;
}

std::optional<Pad> Parser::parsePad(const yaml::Node& k, const yaml::Node& v, const std::string& element, bool unpad) {
  const std::string field = k.Scalar();
  if (!expectMap(v, valueLoc(k, v), element, field)) return std::nullopt;
  Pad p;
  p.loc = valueLoc(k, v);
  bool ok = true;
  forEachPair(v, element + ": " + field, [&](const std::string& key, const yaml::Node& pk, const yaml::Node& pv) {
    SourceLoc loc = valueLoc(pk, pv);
    if (key == "rt" || key == "ct") {
      if (auto i = toInt(pv, loc, element, field + "." + key)) (key == "rt" ? p.rt : p.ct) = *i;
      else ok = false;
    } else if (key == "pad_value" && !unpad) {
      if (auto r = toReal(pv, loc, element, field + ".pad_value")) p.padValue = *r;
      else ok = false;
    } else {
      d_.warning("unknown-field", locOf(pk), element + ": " + field + ": unknown field '" + key + "' (ignored)");
    }
  });
  if (!ok) return std::nullopt;
  return p;
}

bool Parser::parseOperandField(const std::string& key, const yaml::Node& k, const yaml::Node& v,
                               std::vector<Operand>& inputs, const std::string& element) {
  // input_<N>_tms / input_<N>_pad / input_<N>_unpad
  if (key.rfind("input_", 0) != 0) return false;
  size_t us = key.find('_', 6);
  if (us == std::string::npos || us == 6) return false;
  std::string num = key.substr(6, us - 6);
  std::string suffix = key.substr(us + 1);
  if (num.find_first_not_of("0123456789") != std::string::npos || num.size() > 9) return false;
  if (suffix != "tms" && suffix != "pad" && suffix != "unpad") return false;
  size_t index = std::stoul(num);
  if (index >= inputs.size()) {
    d_.error("operand-index", locOf(k), element + ": '" + key + "' refers to input " + num + " but the op has " +
                                            std::to_string(inputs.size()) + " input(s)");
    return true;
  }
  Operand& opnd = inputs[index];
  if (suffix == "tms") {
    // BUDA reads TMs only from a sequence: a repeated `input_N_tms: None`
    // leaves the earlier TMs in place (corpus netlist_fused_op_with_reduce
    // relies on it: without the broadcast its shapes do not match).
    if (isNullScalar(v) && !opnd.tms.empty()) {
      d_.warning("duplicate-key", locOf(k), element + ": '" + key + "' without TMs does not clear the earlier '" + key +
                                                "'; its TMs are kept");
      return true;
    }
    opnd.tmsLoc = valueLoc(k, v);
    opnd.tms = parseTms(k, v, element);
  } else if (suffix == "pad") {
    opnd.pad = parsePad(k, v, element, false);
  } else {
    opnd.unpad = parsePad(k, v, element, true);
  }
  return true;
}

// ====================================================================== attributes
namespace {
enum class AttrKind { Int, Bool, Real, String, IntList, InputMap };

// Where a known attribute lands in the typed view (a null slot: kept in `all` only).
struct AttrSpec {
  AttrKind kind;
  Field<int64_t> OpAttributes::*intSlot = nullptr;
  Field<bool> OpAttributes::*boolSlot = nullptr;
  Field<double> OpAttributes::*realSlot = nullptr;
  Field<std::string> OpAttributes::*stringSlot = nullptr;
  Field<std::vector<int64_t>> OpAttributes::*listSlot = nullptr;
};

std::optional<AttrSpec> attributeSpec(const std::string& key) {
  using A = OpAttributes;
  auto i = [](Field<int64_t> A::*slot = nullptr) { return AttrSpec{AttrKind::Int, slot}; };
  auto b = [](Field<bool> A::*slot = nullptr) { return AttrSpec{AttrKind::Bool, nullptr, slot}; };
  auto r = [](Field<double> A::*slot = nullptr) { return AttrSpec{AttrKind::Real, nullptr, nullptr, slot}; };
  auto s = [](Field<std::string> A::*slot = nullptr) { return AttrSpec{AttrKind::String, nullptr, nullptr, nullptr, slot}; };
  static const std::map<std::string, AttrSpec> specs = {
      {"m_k", i(&A::mK)}, {"u_kt", i(&A::uKt)}, {"z", i(&A::z)}, {"act_t", i(&A::actT)},
      {"fracture_factor", i(&A::fractureFactor)}, {"num_columns", i()}, {"num_index_tiles", i(&A::numIndexTiles)},
      {"num_indices", i(&A::numIndices)}, {"num_sparse_tiles", i(&A::numSparseTiles)},
      {"sparse_tile_ptr_bits", i(&A::sparseTilePtrBits)}, {"sparse_ublock_idx_bits", i(&A::sparseUblockIdxBits)},
      {"starting_row", i()}, {"indices_len", i()}, {"k", i(&A::k)}, {"min_buffer_input", i()}, {"exp", i()},
      {"accumulate", b(&A::accumulate)}, {"approximate_mode", b(&A::approximateMode)}, {"bias", b(&A::bias)},
      {"dequant", b()}, {"identity", b(&A::identity)}, {"kreduce", b(&A::kreduce)}, {"l1_acc", b(&A::l1Acc)},
      {"relu_en", b(&A::relu)}, {"requant", b()}, {"srnd_fpu_en", b()},
      {"relu_threshold", r(&A::reluThreshold)}, {"slope", r()}, {"zero_point", r(&A::zeroPoint)},
      {"dim", s(&A::reduceDim)}, {"granularity", s(&A::granularity)}, {"relu_mode", s(&A::reluMode)},
      {"sfpu_execution_thread", s()}, {"sfpu_op", s()}, {"sort", s(&A::sort)}, {"stoch_rnd_mode", s()},
      {"type", s(&A::reduceType)}, {"vector", s()}, {"fused_op_id", s(&A::fusedOpId)},
      {"single_tile", AttrSpec{AttrKind::IntList}}, {"dest_device", i(&A::destDevice)},
      {"ingress_channels", AttrSpec{AttrKind::IntList, nullptr, nullptr, nullptr, nullptr, &A::ingressChannels}},
      {"egress_channels", AttrSpec{AttrKind::IntList, nullptr, nullptr, nullptr, nullptr, &A::egressChannels}},
      {"kernel_broadcast", AttrSpec{AttrKind::InputMap}}, {"kernel_broadcast_per_t", AttrSpec{AttrKind::InputMap}},
  };
  auto it = specs.find(key);
  if (it != specs.end()) return it->second;
  // splice: input0: [index, length, stride]
  if (key.size() > 5 && key.rfind("input", 0) == 0 && key.find_first_not_of("0123456789", 5) == std::string::npos)
    return AttrSpec{AttrKind::IntList};
  return std::nullopt;
}

std::optional<int> inputIndexKey(const std::string& s) {
  // kernel_broadcast keys: input_<N>
  if (s.rfind("input_", 0) != 0 || s.size() == 6 || s.size() > 10) return std::nullopt;
  if (s.find_first_not_of("0123456789", 6) != std::string::npos) return std::nullopt;
  return std::stoi(s.substr(6));
}
} // namespace

void Parser::parseAttributes(OpAttributes& attrs, const yaml::Node& k, const yaml::Node& v, const std::string& element) {
  attrs.loc = valueLoc(k, v);
  if (isNullScalar(v)) return;
  if (!expectMap(v, attrs.loc, element, "attributes")) return;
  forEachPair(v, element + ": attributes", [&](const std::string& key, const yaml::Node& ak, const yaml::Node& av) {
    SourceLoc loc = valueLoc(ak, av);
    Attribute attr{key, locOf(ak), nullptr, false};
    const std::string field = "attributes." + key;
    auto spec = attributeSpec(key);
    if (!spec) {
      attr.value = yamlToJson(av, rawBudget_); // op-specific attribute we do not model: keep it
      attrs.all.push_back(std::move(attr));
      return;
    }
    attr.known = true;
    switch (spec->kind) {
    case AttrKind::Int: {
      auto i = toInt(av, loc, element, field);
      if (!i) return;
      attr.value = *i;
      if (spec->intSlot) (attrs.*(spec->intSlot)).set(*i, loc);
      break;
    }
    case AttrKind::Bool: {
      auto b = toBool(av, loc, element, field);
      if (!b) return;
      attr.value = *b;
      if (spec->boolSlot) (attrs.*(spec->boolSlot)).set(*b, loc);
      break;
    }
    case AttrKind::Real: {
      auto r = toReal(av, loc, element, field);
      if (!r) return;
      attr.value = std::isfinite(*r) ? nlohmann::ordered_json(*r) : nlohmann::ordered_json(av.Scalar());
      if (spec->realSlot) (attrs.*(spec->realSlot)).set(*r, loc);
      break;
    }
    case AttrKind::String: {
      auto s = toString(av, loc, element, field);
      if (!s) return;
      attr.value = *s;
      if (spec->stringSlot) (attrs.*(spec->stringSlot)).set(*s, loc);
      break;
    }
    case AttrKind::IntList: {
      std::vector<int64_t> values;
      bool ok = av.IsSequence();
      if (ok)
        for (const auto& item : av) {
          auto i = item.IsScalar() ? parseInt64(item.Scalar()) : std::nullopt;
          if (!i) { ok = false; break; }
          values.push_back(*i);
        }
      if (!ok) {
        typeError(loc, element, field, "a list of integers", av);
        return;
      }
      attr.value = values;
      if (key.rfind("input", 0) == 0) attrs.spliceInputs[std::stoi(key.substr(5))] = values;
      if (spec->listSlot) (attrs.*(spec->listSlot)).set(values, loc);
      break;
    }
    case AttrKind::InputMap: {
      if (!av.IsMap()) {
        typeError(loc, element, field, "a map of input_<N>: tiles", av);
        return;
      }
      attr.value = nlohmann::ordered_json::object();
      for (auto it = av.begin(); it != av.end(); ++it) {
        SourceLoc il = locOf(it->first);
        std::string ik = it->first.IsScalar() ? it->first.Scalar() : "";
        auto idx = inputIndexKey(ik);
        auto tiles = it->second.IsScalar() ? parseInt64(it->second.Scalar()) : std::nullopt;
        if (!idx || !tiles) {
          d_.error("field-type", il, element + ": " + field + " entries must be `input_<N>: <tiles>`, got " +
                                         describe(it->first) + ": " + describe(it->second));
          continue;
        }
        attr.value[ik] = *tiles;
        if (key == "kernel_broadcast") attrs.kernelBroadcast[*idx].set(*tiles, il);
      }
      break;
    }
    }
    attrs.all.push_back(std::move(attr));
  });
}

// ====================================================================== graphs and ops
void Parser::parseGraph(const std::string& name, const yaml::Node& k, const yaml::Node& v, Netlist& nl) {
  Graph g;
  g.name = name;
  g.loc = locOf(k);
  const std::string element = "graph " + quote(name);
  if (!expectMap(v, valueLoc(k, v), element, "definition")) return;
  forEachPair(v, element, [&](const std::string& key, const yaml::Node& fk, const yaml::Node& fv) {
    if (key == "target_device") intField(g.targetDevice, fk, fv, element);
    else if (key == "input_count") intField(g.inputCount, fk, fv, element);
    else if (fv.IsMap()) {
      Op op;
      op.name = key;
      op.graph = name;
      op.loc = locOf(fk);
      parseOp(op, fv);
      g.ops.push_back(std::move(op));
    } else unknownField(g.extra, element, key, fk, fv);
  }, false);
  requireKeys(v, g.loc, element, {"target_device", "input_count"});
  nl.graphs.push_back(std::move(g));
}

void Parser::parseOp(Op& op, const yaml::Node& v) {
  const std::string element = "op " + quote(op.name);
  // inputs first: input_N_* fields refer to them wherever they appear in the map.
  if (yaml::Node in = v["inputs"]; in.IsDefined()) {
    op.inputsLoc = locOf(in).valid() ? locOf(in) : op.loc;
    if (in.IsSequence()) {
      for (const auto& item : in) {
        if (item.IsScalar()) op.inputs.push_back({item.Scalar(), valueLoc(in, item), {}, {}, {}, {}});
        else typeError(valueLoc(in, item), element, "inputs", "a list of queue or op names", item);
      }
    } else {
      typeError(op.inputsLoc, element, "inputs", "a list of queue or op names", in);
    }
  }
  forEachPair(v, element, [&](const std::string& key, const yaml::Node& fk, const yaml::Node& fv) {
    if (key == "inputs") return;
    if (key == "type") stringField(op.type, fk, fv, element);
    else if (key == "grid_loc") dimField(op.gridLoc, fk, fv, element);
    else if (key == "grid_size") dimField(op.gridSize, fk, fv, element);
    else if (key == "in_df") {
      op.inDfLoc = valueLoc(fk, fv);
      op.inDf.clear();
      if (!fv.IsSequence()) {
        typeError(op.inDfLoc, element, "in_df", "a list of data formats", fv);
        return;
      }
      for (const auto& item : fv) {
        SourceLoc l = valueLoc(fk, item);
        if (auto f = toEnum<DataFormat>(item, l, element, "data format", parseDataFormat, kDataFormats))
          op.inDf.push_back({*f, l});
      }
    } else if (key == "out_df") formatField(op.outDf, fk, fv, element);
    else if (key == "intermed_df") formatField(op.intermedDf, fk, fv, element);
    else if (key == "acc_df") formatField(op.accDf, fk, fv, element);
    else if (key == "math_fidelity")
      setField(op.mathFidelity, fk, fv, [&](auto& n, SourceLoc l) {
        return toEnum<MathFidelity>(n, l, element, "math_fidelity", parseMathFidelity, "LoFi, HiFi2, HiFi2_A, HiFi2_B, HiFi3, HiFi4");
      });
    else if (key == "t") intField(op.t, fk, fv, element);
    else if (key == "mblock") dimField(op.mblock, fk, fv, element);
    else if (key == "ublock") dimField(op.ublock, fk, fv, element);
    else if (key == "ublock_order") orderField(op.ublockOrder, fk, fv, element);
    else if (key == "buf_size_mb") intField(op.bufSizeMb, fk, fv, element);
    else if (key == "untilize_output") boolField(op.untilizeOutput, fk, fv, element);
    else if (key == "grid_transpose") boolField(op.gridTranspose, fk, fv, element);
    else if (key == "gradient_op") boolField(op.gradientOp, fk, fv, element);
    else if (key == "input_buf_min_size_tiles" || key == "input_dram_io_buf_size_tiles") {
      bool minSize = key == "input_buf_min_size_tiles";
      auto& list = minSize ? op.inputBufMinSizeTiles : op.inputDramIoBufSizeTiles;
      (minSize ? op.inputBufMinSizeTilesLoc : op.inputDramIoBufSizeTilesLoc) = valueLoc(fk, fv);
      list.clear();
      bool ok = fv.IsSequence();
      if (ok)
        for (const auto& item : fv) {
          auto i = item.IsScalar() ? parseInt64(item.Scalar()) : std::nullopt;
          if (!i) { ok = false; break; }
          list.push_back(*i);
        }
      if (!ok) typeError(valueLoc(fk, fv), element, key, "a list of integers (one per input)", fv);
    } else if (key == "overlay_size") intField(op.overlaySize, fk, fv, element);
    else if (key == "tile_dim") dimField(op.tileDim, fk, fv, element);
    else if (key == "attributes") parseAttributes(op.attributes, fk, fv, element);
    else if (parseOperandField(key, fk, fv, op.inputs, element)) return;
    else unknownField(op.extra, element, key, fk, fv);
  });
  requireKeys(v, op.loc, element, {"type"});
  // ethernet_datacopy runs on ethernet cores, which net2pipe picks: no grid_loc.
  if (op.type.value != "ethernet_datacopy") requireKeys(v, op.loc, element, {"grid_loc"});
  requireKeys(v, op.loc, element,
              {"grid_size", "inputs", "in_df", "out_df", "acc_df", "intermed_df", "math_fidelity", "t", "mblock", "ublock"});
}

// ====================================================================== fused ops
void Parser::parseFusedOps(const yaml::Node& k, const yaml::Node& v, Netlist& nl) {
  if (isNullScalar(v)) return;
  if (!expectMap(v, valueLoc(k, v), "netlist", "fused_ops")) return;
  forEachPair(v, "fused_ops", [&](const std::string& id, const yaml::Node& fk, const yaml::Node& fv) {
    FusedOp f;
    f.id = id;
    f.loc = locOf(fk);
    const std::string element = "fused op " + quote(id);
    if (!expectMap(fv, valueLoc(fk, fv), element, "definition")) return;
    forEachPair(fv, element, [&](const std::string& key, const yaml::Node& sk, const yaml::Node& sv) {
      if (key == "inputs") intField(f.inputs, sk, sv, element);
      else if (key == "intermediates") intField(f.intermediates, sk, sv, element);
      else if (key == "schedules") {
        if (!sv.IsSequence()) {
          typeError(valueLoc(sk, sv), element, "schedules", "a list of schedules (each a list of sub-ops)", sv);
          return;
        }
        size_t si = 0;
        for (const auto& sched : sv) {
          FusedSchedule s;
          s.loc = valueLoc(sk, sched);
          const std::string schedElement = element + " schedule " + std::to_string(si++);
          if (!sched.IsSequence()) {
            typeError(s.loc, schedElement, "schedule", "a list of sub-ops", sched);
            continue;
          }
          for (const auto& item : sched) {
            if (!item.IsMap() || item.size() != 1 || !item.begin()->first.IsScalar()) {
              typeError(valueLoc(sk, item), schedElement, "sub-op", "a single `name: {fields}` pair", item);
              continue;
            }
            FusedSubOp sub;
            sub.name = item.begin()->first.Scalar();
            sub.loc = locOf(item.begin()->first);
            parseFusedSubOp(sub, item.begin()->second, schedElement + " sub-op " + quote(sub.name));
            s.ops.push_back(std::move(sub));
          }
          f.schedules.push_back(std::move(s));
        }
      } else unknownField(f.extra, element, key, sk, sv);
    });
    requireKeys(fv, f.loc, element, {"inputs", "intermediates", "schedules"});
    nl.fusedOps.push_back(std::move(f));
  }, false);
}

void Parser::parseFusedSubOp(FusedSubOp& sub, const yaml::Node& v, const std::string& element) {
  if (!expectMap(v, sub.loc, element, "definition")) return;
  if (yaml::Node in = v["inputs"]; in.IsDefined()) {
    sub.inputsLoc = locOf(in).valid() ? locOf(in) : sub.loc;
    if (in.IsSequence()) {
      for (const auto& item : in) {
        if (item.IsScalar()) sub.inputs.push_back({item.Scalar(), valueLoc(in, item), {}, {}, {}, {}});
        else typeError(valueLoc(in, item), element, "inputs", "a list of inputN, intermedN or dest", item);
      }
    } else {
      typeError(sub.inputsLoc, element, "inputs", "a list of inputN, intermedN or dest", in);
    }
  }
  auto nameList = [&](std::vector<Field<std::string>>& out, const yaml::Node& fk, const yaml::Node& fv) {
    out.clear();
    if (!fv.IsSequence()) {
      typeError(valueLoc(fk, fv), element, fk.Scalar(), "a list of buffer names", fv);
      return;
    }
    for (const auto& item : fv) {
      SourceLoc l = valueLoc(fk, item);
      if (item.IsScalar()) out.push_back({item.Scalar(), l});
      else typeError(l, element, fk.Scalar(), "a list of buffer names", item);
    }
  };
  forEachPair(v, element, [&](const std::string& key, const yaml::Node& fk, const yaml::Node& fv) {
    if (key == "inputs") return;
    if (key == "type") stringField(sub.type, fk, fv, element);
    else if (key == "output") stringField(sub.output, fk, fv, element);
    else if (key == "pop") nameList(sub.pop, fk, fv);
    else if (key == "pop_last") nameList(sub.popLast, fk, fv);
    else if (key == "mblock") dimField(sub.mblock, fk, fv, element);
    else if (key == "ublock") dimField(sub.ublock, fk, fv, element);
    else if (key == "t") intField(sub.t, fk, fv, element);
    else if (key == "attributes") parseAttributes(sub.attributes, fk, fv, element);
    else if (parseOperandField(key, fk, fv, sub.inputs, element)) return;
    else unknownField(sub.extra, element, key, fk, fv);
  });
  requireKeys(v, sub.loc, element, {"type", "inputs", "output", "mblock", "ublock"});
}

// ====================================================================== programs
std::optional<Operand64> Parser::parseOperand64(const yaml::Node& v, SourceLoc loc, const std::string& element,
                                                const std::string& field, bool allowBool) {
  if (v.IsScalar()) {
    const std::string& s = v.Scalar();
    if (!s.empty() && s[0] == '$') return Operand64{true, s, 0, loc};
    if (auto i = parseInt64(s)) return Operand64{false, "", *i, loc};
    if (allowBool)
      if (auto b = parseBool(s)) return Operand64{false, "", *b ? 1 : 0, loc};
  }
  typeError(loc, element, field, allowBool ? "true, false or a $variable" : "an integer or a $variable", v);
  return std::nullopt;
}

} // namespace tessera::netlist::parse_detail

namespace tessera::netlist {

using parse_detail::Parser;

std::optional<Netlist> parseNetlist(const SourceBuffer& source, DiagnosticEngine& diags) {
  auto doc = parseYaml(source, diags);
  if (!doc) return std::nullopt;
  return Parser(diags).run(doc->root());
}

} // namespace tessera::netlist