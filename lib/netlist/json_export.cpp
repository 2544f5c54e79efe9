// The normalised netlist model as JSON. The shape is a contract: it is
// documented field by field in docs/netlist-json.md and checked by
// schemas/netlist.schema.json, so every change here must update both.
#include "netlist/json_export.hpp"

#include <cmath>
#include <cstdio>
#include <set>

namespace tessera::netlist {
namespace {

using Json = nlohmann::ordered_json;

Json locJson(SourceLoc l) {
  // Elements always have a key position; null only for synthesised ones.
  if (!l.valid()) return nullptr;
  return Json{{"line", l.line}, {"col", l.col}};
}

Json dimJson(const Dim2& d) { return Json::array({d.r, d.c}); }

// Addresses are 64-bit; JSON readers that use doubles lose bits past 2^53,
// so they travel as lower-case hex strings.
Json hexJson(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// nlohmann writes NaN and infinities as null; spell them out instead so the
// value survives (the YAML allowed `.inf` / `.nan`).
Json realJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// Required fields are present in every netlist netlist-check accepts; an
// absent one (only possible after errors) becomes null.
template <class T, class Conv> Json fieldJson(const Field<T>& f, Conv conv) {
  return f.present() ? Json(conv(f.value)) : Json(nullptr);
}
Json intJson(const Field<int64_t>& f) { return fieldJson(f, [](int64_t v) { return v; }); }
Json strJson(const Field<std::string>& f) { return fieldJson(f, [](const std::string& v) { return v; }); }
Json dimJson(const Field<Dim2>& f) { return fieldJson(f, [](const Dim2& v) { return dimJson(v); }); }
Json realJson(const Field<double>& f) { return fieldJson(f, [](double v) { return realJson(v); }); }
Json formatJson(const Field<DataFormat>& f) {
  return fieldJson(f, [](DataFormat v) { return std::string(dataFormatName(v)); });
}
template <class T> Json orDefault(const Field<T>& f, T def) { return f.present() ? f.value : def; }

Json extraJson(const std::vector<ExtraField>& extra) {
  // A repeated unknown key keeps its first position and its last value, like
  // every other repeated key (the later value is used).
  Json out = Json::object();
  for (const ExtraField& e : extra) out[e.key] = e.value;
  return out;
}

Json tmJson(const Tm& tm) {
  Json j = Json::object();
  j["tm"] = std::string(tmKindName(tm.kind));
  switch (tm.kind) {
  case TmKind::Broadcast:
    j["dim"] = std::string(1, tm.dim);
    j["factor"] = tm.factor;
    break;
  case TmKind::TileBroadcast:
    j["dim"] = std::string(1, tm.dim);
    break;
  case TmKind::Transpose:
    break;
  case TmKind::Pad: // same fields as an operand's input_N_pad
    j["rt"] = tm.pad.rt;
    j["ct"] = tm.pad.ct;
    j["pad_value"] = realJson(tm.pad.padValue);
    break;
  default: // hslice, hstack, vslice, vstack
    j["factor"] = tm.factor;
  }
  return j;
}

Json tmsJson(const std::vector<Tm>& tms) {
  Json out = Json::array();
  for (const Tm& tm : tms) out.push_back(tmJson(tm));
  return out;
}

Json padJson(const std::optional<Pad>& p, bool unpad) {
  if (!p) return nullptr;
  Json j{{"rt", p->rt}, {"ct", p->ct}};
  if (!unpad) j["pad_value"] = realJson(p->padValue);
  return j;
}

Json operandsJson(const std::vector<Operand>& inputs) {
  Json out = Json::array();
  for (const Operand& o : inputs)
    out.push_back(Json{{"name", o.name}, {"loc", locJson(o.loc)}, {"tms", tmsJson(o.tms)},
                       {"pad", padJson(o.pad, false)}, {"unpad", padJson(o.unpad, true)}});
  return out;
}

// `attributes` is the ordered map the user wrote (typed values); the keys the
// parser does not model are listed again so consumers can flag them.
void attributesJson(Json& j, const OpAttributes& attrs) {
  Json values = Json::object();
  Json unknown = Json::array();
  std::set<std::string> listed;
  for (const Attribute& a : attrs.all) {
    values[a.key] = a.value; // repeated key: first position, last value (as OpAttributes::find)
    if (!a.known && listed.insert(a.key).second) unknown.push_back(a.key);
  }
  j["attributes"] = std::move(values);
  j["unknown_attributes"] = std::move(unknown);
}

Json allocationsJson(const std::vector<AllocAddress>& allocs) {
  Json out = Json::array();
  for (const AllocAddress& a : allocs) out.push_back(Json{{"channel", a.channel}, {"address", hexJson(a.address)}});
  return out;
}

Json queueJson(const Queue& q) {
  Json j = Json::object();
  j["name"] = q.name;
  j["loc"] = locJson(q.loc);
  j["input"] = strJson(q.input);
  j["type"] = fieldJson(q.type, [](IoType v) { return std::string(ioTypeName(v)); });
  j["entries"] = intJson(q.entries);
  j["grid_size"] = dimJson(q.gridSize);
  j["t"] = intJson(q.t);
  j["mblock"] = dimJson(q.mblock);
  j["ublock"] = dimJson(q.ublock);
  j["ublock_order"] = std::string(ublockOrderName(q.order()));
  j["df"] = formatJson(q.df);
  j["target_device"] = intJson(q.targetDevice);
  // The YAML field is `loc`, which here names the source position.
  j["location"] = fieldJson(q.location, [](IoLocation v) { return std::string(ioLocationName(v)); });
  j["dram"] = allocationsJson(q.dram);
  j["host"] = allocationsJson(q.host);
  j["alias"] = strJson(q.alias);
  j["layout"] = orDefault<std::string>(q.layout, "tilized");
  j["tile_dim"] = dimJson(q.tileDim.present() ? q.tileDim.value : Dim2{32, 32});
  j["input_tms"] = tmsJson(q.inputTms);
  j["extra"] = extraJson(q.extra);
  return j;
}

Json intListJson(const std::vector<int64_t>& list, SourceLoc loc) {
  // Absent (the backend chooses) is distinct from an explicit empty list.
  if (!loc.valid()) return nullptr;
  return Json(list);
}

Json opJson(const Op& op) {
  Json j = Json::object();
  j["name"] = op.name;
  j["loc"] = locJson(op.loc);
  j["type"] = strJson(op.type);
  j["grid_loc"] = dimJson(op.gridLoc);
  j["grid_size"] = dimJson(op.gridSize);
  j["inputs"] = operandsJson(op.inputs);
  Json inDf = Json::array();
  for (const auto& f : op.inDf) inDf.push_back(std::string(dataFormatName(f.value)));
  j["in_df"] = std::move(inDf);
  j["out_df"] = formatJson(op.outDf);
  j["intermed_df"] = formatJson(op.intermedDf);
  j["acc_df"] = formatJson(op.accDf);
  j["math_fidelity"] = fieldJson(op.mathFidelity, [](MathFidelity v) { return std::string(mathFidelityName(v)); });
  j["t"] = intJson(op.t);
  j["mblock"] = dimJson(op.mblock);
  j["ublock"] = dimJson(op.ublock);
  j["ublock_order"] = std::string(ublockOrderName(op.order()));
  j["buf_size_mb"] = orDefault<int64_t>(op.bufSizeMb, 1);
  j["untilize_output"] = orDefault(op.untilizeOutput, false);
  j["grid_transpose"] = orDefault(op.gridTranspose, false);
  j["gradient_op"] = orDefault(op.gradientOp, false);
  j["input_buf_min_size_tiles"] = intListJson(op.inputBufMinSizeTiles, op.inputBufMinSizeTilesLoc);
  j["input_dram_io_buf_size_tiles"] = intListJson(op.inputDramIoBufSizeTiles, op.inputDramIoBufSizeTilesLoc);
  j["overlay_size"] = intJson(op.overlaySize);
  j["tile_dim"] = dimJson(op.tileDim.present() ? op.tileDim.value : Dim2{32, 32});
  attributesJson(j, op.attributes);
  j["extra"] = extraJson(op.extra);
  return j;
}

Json graphJson(const Graph& g) {
  Json ops = Json::array();
  for (const Op& op : g.ops) ops.push_back(opJson(op));
  return Json{{"name", g.name},
              {"loc", locJson(g.loc)},
              {"target_device", intJson(g.targetDevice)},
              {"input_count", intJson(g.inputCount)},
              {"ops", std::move(ops)},
              {"extra", extraJson(g.extra)}};
}

Json nameListJson(const std::vector<Field<std::string>>& names) {
  Json out = Json::array();
  for (const auto& n : names) out.push_back(n.value);
  return out;
}

Json subOpJson(const FusedSubOp& s) {
  Json j = Json::object();
  j["name"] = s.name;
  j["loc"] = locJson(s.loc);
  j["type"] = strJson(s.type);
  j["inputs"] = operandsJson(s.inputs);
  j["output"] = strJson(s.output);
  j["pop"] = nameListJson(s.pop);
  j["pop_last"] = nameListJson(s.popLast);
  j["mblock"] = dimJson(s.mblock);
  j["ublock"] = dimJson(s.ublock);
  j["t"] = intJson(s.t); // null: the fused op's t
  attributesJson(j, s.attributes);
  j["extra"] = extraJson(s.extra);
  return j;
}

Json fusedOpJson(const FusedOp& f) {
  Json schedules = Json::array();
  for (const FusedSchedule& s : f.schedules) {
    Json ops = Json::array();
    for (const FusedSubOp& sub : s.ops) ops.push_back(subOpJson(sub));
    schedules.push_back(std::move(ops));
  }
  return Json{{"name", f.id},
              {"loc", locJson(f.loc)},
              {"inputs", intJson(f.inputs)},
              {"intermediates", intJson(f.intermediates)},
              {"schedules", std::move(schedules)},
              {"extra", extraJson(f.extra)}};
}

// An instruction argument: {"var": "$x"} or {"value": 3} (booleans for the
// boolean queue settings), so a consumer never has to sniff a `$`.
Json argJson(const Operand64& a, bool boolean = false) {
  if (a.isVar) return Json{{"var", a.var}};
  if (boolean) return Json{{"value", a.value != 0}};
  return Json{{"value", a.value}};
}

Json queueSettingJson(const QueueSetting& qs) {
  // Static flags default to false as in BUDA; pointers and strides stay null
  // when not given (the runtime keeps its current value / device default).
  auto flag = [](const std::optional<Operand64>& o) { return o ? argJson(*o, true) : Json{{"value", false}}; };
  auto num = [](const std::optional<Operand64>& o) { return o ? argJson(*o) : Json(nullptr); };
  Json j = Json::object();
  j["name"] = qs.queue;
  j["loc"] = locJson(qs.loc);
  j["prologue"] = flag(qs.prologue);
  j["epilogue"] = flag(qs.epilogue);
  j["zero"] = flag(qs.zero);
  j["read_only"] = flag(qs.readOnly);
  j["rd_ptr_local"] = num(qs.rdPtrLocal);
  j["rd_ptr_global"] = num(qs.rdPtrGlobal);
  j["wr_ptr_global"] = num(qs.wrPtrGlobal);
  j["rd_ptr_autoinc"] = num(qs.rdPtrAutoinc);
  j["global_rdptr_autoinc"] = num(qs.globalRdptrAutoinc);
  j["global_wrptr_autoinc"] = num(qs.globalWrptrAutoinc);
  j["extra"] = extraJson(qs.extra);
  return j;
}

const char* instrName(InstrKind k) {
  switch (k) {
  case InstrKind::Var: return "var";
  case InstrKind::StaticVar: return "staticvar";
  case InstrKind::Param: return "param";
  case InstrKind::VarInst: return "varinst";
  case InstrKind::Loop: return "loop";
  case InstrKind::EndLoop: return "endloop";
  case InstrKind::Execute: return "execute";
  case InstrKind::AllocateQueue: return "allocate_queue";
  case InstrKind::DeallocateQueue: return "deallocate_queue";
  case InstrKind::EndProgram: return "endprogram";
  }
  return "?";
}

Json instructionJson(const Instruction& ins) {
  Json j = Json::object();
  j["op"] = instrName(ins.kind);
  j["loc"] = locJson(ins.loc);
  switch (ins.kind) {
  case InstrKind::Var: case InstrKind::StaticVar: case InstrKind::Param: {
    Json vars = Json::array();
    for (const VarDecl& v : ins.vars)
      vars.push_back(Json{{"name", v.name}, {"loc", locJson(v.loc)}, {"init", v.init ? Json(*v.init) : Json(nullptr)}});
    j["vars"] = std::move(vars);
    break;
  }
  case InstrKind::VarInst: {
    j["out"] = ins.out;
    j["opcode"] = std::string(varOpcodeName(ins.opcode));
    Json args = Json::array();
    for (const Operand64& a : ins.args) args.push_back(argJson(a));
    j["args"] = std::move(args);
    break;
  }
  case InstrKind::Loop:
    j["count"] = argJson(ins.loopCount);
    break;
  case InstrKind::Execute: {
    j["graph_name"] = strJson(ins.graphName);
    Json settings = Json::array();
    for (const QueueSetting& qs : ins.queueSettings) settings.push_back(queueSettingJson(qs));
    j["queue_settings"] = std::move(settings);
    break;
  }
  case InstrKind::AllocateQueue: case InstrKind::DeallocateQueue:
    j["queues"] = nameListJson(ins.queues);
    break;
  case InstrKind::EndLoop: case InstrKind::EndProgram:
    break;
  }
  return j;
}

Json programJson(const Program& p) {
  Json instructions = Json::array();
  for (const Instruction& ins : p.instructions) instructions.push_back(instructionJson(ins));
  return Json{{"name", p.name}, {"loc", locJson(p.loc)}, {"instructions", std::move(instructions)}};
}

// ------------------------------------------------------------ test-config
void comparisonFields(Json& j, const ComparisonConfig& c) {
  j["type"] = strJson(c.type);
  j["atol"] = realJson(c.atol);
  j["rtol"] = realJson(c.rtol);
  j["check_pct"] = realJson(c.checkPct);
  j["check_pcc"] = realJson(c.checkPcc);
  j["verbosity"] = strJson(c.verbosity);
}

void stimulusFields(Json& j, const StimulusConfig& s) {
  j["type"] = strJson(s.type);
  j["uniform_lower_bound"] = realJson(s.uniformLowerBound);
  j["uniform_upper_bound"] = realJson(s.uniformUpperBound);
  j["normal_mean"] = realJson(s.normalMean);
  j["normal_stddev"] = realJson(s.normalStddev);
  j["constant_value"] = realJson(s.constantValue);
  j["step_start"] = realJson(s.stepStart);
  j["step_increment"] = realJson(s.stepIncrement);
  j["debug_tile_id_base"] = realJson(s.debugTileIdBase);
  j["debug_tile_id_step"] = realJson(s.debugTileIdStep);
}

// Comparison and stimulus configs share their shape: fields, then overrides
// (per queue-name pattern, the same fields) and the unknown keys.
template <class Config> Json configJson(const Config& c, void (*fields)(Json&, const Config&)) {
  Json j{{"loc", locJson(c.loc)}};
  fields(j, c);
  Json overrides = Json::array();
  for (const auto& [queue, o] : c.overrides) {
    Json oj{{"name", queue}, {"loc", locJson(o.loc)}};
    fields(oj, o);
    oj["extra"] = extraJson(o.extra);
    overrides.push_back(std::move(oj));
  }
  j["overrides"] = std::move(overrides);
  j["extra"] = extraJson(c.extra);
  return j;
}

Json testConfigJson(const std::optional<TestConfig>& tc) {
  if (!tc) return nullptr;
  return Json{{"loc", locJson(tc->loc)},
              {"comparison_config", tc->comparison ? configJson(*tc->comparison, comparisonFields) : Json(nullptr)},
              {"stimulus_config", tc->stimulus ? configJson(*tc->stimulus, stimulusFields) : Json(nullptr)},
              {"extra", extraJson(tc->extra)}};
}

} // namespace

nlohmann::ordered_json netlistToJson(const Netlist& nl) {
  Json j = Json::object();
  j["format"] = "tessera-netlist";
  j["version"] = 1;
  Json archs = Json::array();
  for (const auto& a : nl.devices.arch) archs.push_back(std::string(archName(a.value)));
  j["devices"] = Json{{"arch", std::move(archs)}};
  // Arrays, not maps: source order and repeated names stay visible.
  Json queues = Json::array();
  for (const Queue& q : nl.queues) queues.push_back(queueJson(q));
  j["queues"] = std::move(queues);
  Json graphs = Json::array();
  for (const Graph& g : nl.graphs) graphs.push_back(graphJson(g));
  j["graphs"] = std::move(graphs);
  Json fused = Json::array();
  for (const FusedOp& f : nl.fusedOps) fused.push_back(fusedOpJson(f));
  j["fused_ops"] = std::move(fused);
  Json programs = Json::array();
  for (const Program& p : nl.programs) programs.push_back(programJson(p));
  j["programs"] = std::move(programs);
  j["test_config"] = testConfigJson(nl.testConfig);
  j["performance_check"] = nl.performanceCheck ? nl.performanceCheck->value : Json(nullptr);
  j["extra_sections"] = extraJson(nl.extra);
  return j;
}

} // namespace tessera::netlist
