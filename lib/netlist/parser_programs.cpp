// The netlist parser: programs (instructions, execute, loops, variables)
// and test-config (comparison and stimulus).
#include "netlist/parser_impl.hpp"

namespace tessera::netlist::parse_detail {

void Parser::parsePrograms(const yaml::Node& k, const yaml::Node& v, Netlist& nl) {
  if (isNullScalar(v)) return;
  if (!v.IsSequence()) {
    typeError(valueLoc(k, v), "netlist", "programs", "a list of `name: [instructions]` entries", v);
    return;
  }
  for (const auto& item : v) {
    if (!item.IsMap() || item.size() != 1 || !item.begin()->first.IsScalar()) {
      typeError(valueLoc(k, item), "programs", "program", "a single `name: [instructions]` pair", item);
      continue;
    }
    Program p;
    p.name = item.begin()->first.Scalar();
    p.loc = locOf(item.begin()->first);
    const yaml::Node body = item.begin()->second;
    if (isNullScalar(body)) {
      nl.programs.push_back(std::move(p));
      continue;
    }
    if (!body.IsSequence()) {
      typeError(valueLoc(item.begin()->first, body), "program " + quote(p.name), "body", "a list of instructions", body);
      continue;
    }
    for (const auto& ins : body) parseInstruction(p, ins);
    nl.programs.push_back(std::move(p));
  }
}

void Parser::parseInstruction(Program& prog, const yaml::Node& item) {
  const std::string element = "program " + quote(prog.name);
  Instruction ins;
  ins.loc = locOf(item).valid() ? locOf(item) : prog.loc;
  std::string op;
  yaml::Node arg;
  yaml::Node key;
  if (item.IsScalar()) {
    op = item.Scalar();
  } else if (item.IsMap() && item.size() == 1 && item.begin()->first.IsScalar()) {
    key = item.begin()->first;
    op = key.Scalar();
    arg = item.begin()->second;
    ins.loc = locOf(key);
  } else {
    d_.error("program-syntax", ins.loc, element + ": each instruction must be `name: arguments` or a bare endloop/endprogram, got " + describe(item));
    return;
  }
  SourceLoc argLoc = arg.IsDefined() && locOf(arg).valid() ? locOf(arg) : ins.loc;
  auto noArgs = [&](InstrKind kind) {
    if (arg.IsDefined() && !isNullScalar(arg))
      d_.error("program-syntax", argLoc, element + ": '" + op + "' takes no arguments, got " + describe(arg));
    ins.kind = kind;
  };
  if (op == "endloop" || op == "end_loop") noArgs(InstrKind::EndLoop);
  else if (op == "endprogram" || op == "end_program") noArgs(InstrKind::EndProgram);
  else if (op == "var" || op == "staticvar" || op == "param") {
    ins.kind = op == "var" ? InstrKind::Var : op == "staticvar" ? InstrKind::StaticVar : InstrKind::Param;
    auto declName = [&](const yaml::Node& n, SourceLoc l) -> std::optional<std::string> {
      if (n.IsScalar() && n.Scalar().size() > 1 && n.Scalar()[0] == '$') return n.Scalar();
      d_.error("program-syntax", l, element + ": " + op + " names must start with '$', got " + describe(n));
      return std::nullopt;
    };
    if (arg.IsSequence()) {
      for (const auto& n : arg) {
        SourceLoc l = locOf(n).valid() ? locOf(n) : argLoc;
        if (auto name = declName(n, l)) ins.vars.push_back({*name, l, std::nullopt});
      }
    } else if (arg.IsMap() && op != "param") {
      for (auto it = arg.begin(); it != arg.end(); ++it) {
        SourceLoc l = locOf(it->first).valid() ? locOf(it->first) : argLoc;
        auto name = declName(it->first, l);
        auto init = toInt(it->second, valueLoc(it->first, it->second), element, op + " initial value");
        if (name && init) ins.vars.push_back({*name, l, *init});
      }
    } else {
      d_.error("program-syntax", argLoc, element + ": " + op + " takes a list of $names" +
                                             (op == "param" ? "" : " or a map of $name: value") + ", got " + describe(arg));
      return;
    }
  } else if (op == "varinst") {
    ins.kind = InstrKind::VarInst;
    if (!arg.IsSequence() || arg.size() < 2 || !arg[0].IsScalar() || !arg[1].IsScalar()) {
      d_.error("program-syntax", argLoc, element + ": varinst takes [$out, opcode, args...], got " + describe(arg));
      return;
    }
    ins.out = arg[0].Scalar();
    ins.outLoc = locOf(arg[0]).valid() ? locOf(arg[0]) : argLoc;
    if (ins.out.empty() || ins.out[0] != '$') {
      d_.error("program-syntax", ins.outLoc, element + ": varinst destination must be a $variable, got " + describe(arg[0]));
      return;
    }
    auto opcode = parseVarOpcode(arg[1].Scalar());
    SourceLoc opLoc = locOf(arg[1]).valid() ? locOf(arg[1]) : argLoc;
    if (!opcode) {
      d_.error("program-syntax", opLoc, element + ": unknown varinst opcode " + quote(arg[1].Scalar()) +
                                            " (expected set, add, mul, inc or incwrap)");
      return;
    }
    ins.opcode = *opcode;
    for (size_t i = 2; i < arg.size(); ++i) {
      SourceLoc l = locOf(arg[i]).valid() ? locOf(arg[i]) : argLoc;
      auto a = parseOperand64(arg[i], l, element, "varinst argument", false);
      if (!a) return;
      ins.args.push_back(*a);
    }
    size_t want = (*opcode == VarOpcode::Set || *opcode == VarOpcode::Inc) ? 1 : 2;
    if (ins.args.size() != want) {
      d_.error("program-syntax", opLoc, element + ": varinst " + arg[1].Scalar() + " takes " + std::to_string(want) +
                                            " argument(s), got " + std::to_string(ins.args.size()));
      return;
    }
  } else if (op == "loop") {
    ins.kind = InstrKind::Loop;
    auto count = parseOperand64(arg, argLoc, element, "loop count", false);
    if (!count) return;
    ins.loopCount = *count;
  } else if (op == "execute") {
    ins.kind = InstrKind::Execute;
    parseExecute(ins, key, arg, element);
  } else if (op == "allocate_queue" || op == "deallocate_queue") {
    ins.kind = op == "allocate_queue" ? InstrKind::AllocateQueue : InstrKind::DeallocateQueue;
    if (!arg.IsSequence()) {
      d_.error("program-syntax", argLoc, element + ": " + op + " takes a list of queue names, got " + describe(arg));
      return;
    }
    for (const auto& n : arg) {
      SourceLoc l = locOf(n).valid() ? locOf(n) : argLoc;
      if (n.IsScalar()) ins.queues.push_back({n.Scalar(), l});
      else d_.error("program-syntax", l, element + ": " + op + " takes queue names, got " + describe(n));
    }
  } else {
    d_.error("program-syntax", ins.loc, element + ": unknown instruction " + quote(op) +
                                            " (expected var, staticvar, param, varinst, loop, endloop, execute, "
                                            "allocate_queue, deallocate_queue or endprogram)");
    return;
  }
  prog.instructions.push_back(std::move(ins));
}

void Parser::parseExecute(Instruction& ins, const yaml::Node& k, const yaml::Node& v, const std::string& element) {
  if (!v.IsMap()) {
    d_.error("program-syntax", valueLoc(k, v), element + ": execute takes a map {graph_name: ..., queue_settings: ...}, got " + describe(v));
    return;
  }
  forEachPair(v, element + ": execute", [&](const std::string& key, const yaml::Node& ek, const yaml::Node& ev) {
    if (key == "graph_name") stringField(ins.graphName, ek, ev, element);
    else if (key == "queue_settings") {
      if (isNullScalar(ev)) return;
      if (!expectMap(ev, valueLoc(ek, ev), element, "queue_settings")) return;
      forEachPair(ev, element + ": queue_settings", [&](const std::string& qname, const yaml::Node& qk, const yaml::Node& qv) {
        QueueSetting qs;
        qs.queue = qname;
        qs.loc = locOf(qk);
        const std::string qel = element + ": queue_settings of " + quote(qname);
        if (!isNullScalar(qv)) {
          if (!expectMap(qv, valueLoc(qk, qv), qel, "settings")) return;
          forEachPair(qv, qel, [&](const std::string& f, const yaml::Node& sk, const yaml::Node& sv) {
            static const std::map<std::string, std::optional<Operand64> QueueSetting::*> fields = {
                {"prologue", &QueueSetting::prologue}, {"epilogue", &QueueSetting::epilogue},
                {"zero", &QueueSetting::zero}, {"read_only", &QueueSetting::readOnly},
                {"rd_ptr_local", &QueueSetting::rdPtrLocal}, {"rd_ptr_global", &QueueSetting::rdPtrGlobal},
                {"wr_ptr_global", &QueueSetting::wrPtrGlobal}, {"global_rdptr_autoinc", &QueueSetting::globalRdptrAutoinc},
                {"rd_ptr_autoinc", &QueueSetting::rdPtrAutoinc}, {"global_wrptr_autoinc", &QueueSetting::globalWrptrAutoinc},
            };
            auto it = fields.find(f);
            if (it == fields.end()) {
              unknownField(qs.extra, qel, f, sk, sv);
              return;
            }
            bool boolean = f == "prologue" || f == "epilogue" || f == "zero" || f == "read_only";
            qs.*(it->second) = parseOperand64(sv, valueLoc(sk, sv), qel, f, boolean);
          });
        }
        ins.queueSettings.push_back(std::move(qs));
      });
    } else {
      d_.warning("unknown-field", locOf(ek), element + ": execute: unknown field '" + key + "' (ignored)");
    }
  });
  if (!ins.graphName.present())
    d_.error("missing-field", ins.loc, element + ": execute: missing required field 'graph_name'");
}

// ====================================================================== test-config
ComparisonConfig Parser::parseComparison(const yaml::Node& k, const yaml::Node& v, const std::string& element,
                                         bool allowOverrides) {
  ComparisonConfig c;
  c.loc = locOf(k);
  if (!expectMap(v, valueLoc(k, v), element, "comparison-config")) return c;
  auto real = [&](Field<double>& f, const yaml::Node& fk, const yaml::Node& fv) {
    setField(f, fk, fv, [&](auto& n, SourceLoc l) { return toReal(n, l, element, fk.Scalar()); });
  };
  forEachPair(v, element, [&](const std::string& key, const yaml::Node& fk, const yaml::Node& fv) {
    if (key == "type") stringField(c.type, fk, fv, element);
    else if (key == "atol") real(c.atol, fk, fv);
    else if (key == "rtol") real(c.rtol, fk, fv);
    else if (key == "check_pct") real(c.checkPct, fk, fv);
    else if (key == "check_pcc") real(c.checkPcc, fk, fv);
    else if (key == "verbosity") stringField(c.verbosity, fk, fv, element);
    else if (key == "overrides" && allowOverrides) {
      if (isNullScalar(fv) || !expectMap(fv, valueLoc(fk, fv), element, "overrides")) return;
      forEachPair(fv, element + ": overrides", [&](const std::string& q, const yaml::Node& ok, const yaml::Node& ov) {
        c.overrides.emplace_back(q, parseComparison(ok, ov, element + ": override " + quote(q), false));
      });
    } else c.extra.push_back(extraField(key, fk, fv)); // check_tile_rows_range, method, ...
  });
  return c;
}

StimulusConfig Parser::parseStimulus(const yaml::Node& k, const yaml::Node& v, const std::string& element,
                                     bool allowOverrides) {
  StimulusConfig s;
  s.loc = locOf(k);
  if (!expectMap(v, valueLoc(k, v), element, "stimulus-config")) return s;
  auto real = [&](Field<double>& f, const yaml::Node& fk, const yaml::Node& fv) {
    setField(f, fk, fv, [&](auto& n, SourceLoc l) { return toReal(n, l, element, fk.Scalar()); });
  };
  forEachPair(v, element, [&](const std::string& key, const yaml::Node& fk, const yaml::Node& fv) {
    if (key == "type") stringField(s.type, fk, fv, element);
    else if (key == "uniform_lower_bound") real(s.uniformLowerBound, fk, fv);
    else if (key == "uniform_upper_bound") real(s.uniformUpperBound, fk, fv);
    else if (key == "normal_mean") real(s.normalMean, fk, fv);
    else if (key == "normal_stddev") real(s.normalStddev, fk, fv);
    else if (key == "constant_value") real(s.constantValue, fk, fv);
    else if (key == "step_start") real(s.stepStart, fk, fv);
    else if (key == "step_increment") real(s.stepIncrement, fk, fv);
    else if (key == "debug_tile_id_base") real(s.debugTileIdBase, fk, fv);
    else if (key == "debug_tile_id_step") real(s.debugTileIdStep, fk, fv);
    else if (key == "overrides" && allowOverrides) {
      if (isNullScalar(fv) || !expectMap(fv, valueLoc(fk, fv), element, "overrides")) return;
      forEachPair(fv, element + ": overrides", [&](const std::string& q, const yaml::Node& ok, const yaml::Node& ov) {
        s.overrides.emplace_back(q, parseStimulus(ok, ov, element + ": override " + quote(q), false));
      });
    } else s.extra.push_back(extraField(key, fk, fv)); // set_tile_rows, matmul_ident_name, ...
  });
  return s;
}

void Parser::parseTestConfig(const yaml::Node& k, const yaml::Node& v, Netlist& nl) {
  TestConfig tc;
  tc.loc = locOf(k);
  if (isNullScalar(v)) {
    nl.testConfig = std::move(tc);
    return;
  }
  if (!expectMap(v, valueLoc(k, v), "test-config", "test-config")) return;
  forEachPair(v, "test-config", [&](const std::string& key, const yaml::Node& fk, const yaml::Node& fv) {
    if (key == "comparison-config") tc.comparison = parseComparison(fk, fv, "test-config: comparison-config", true);
    else if (key == "stimulus-config") tc.stimulus = parseStimulus(fk, fv, "test-config: stimulus-config", true);
    else tc.extra.push_back(extraField(key, fk, fv)); // test-args, io-config, ...
  });
  nl.testConfig = std::move(tc);
}

} // namespace tessera::netlist::parse_detail
