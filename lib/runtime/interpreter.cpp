// The program interpreter. Variable rules follow the BUDA backend's
// netlist_program (docs/runtime.md lists them): a var may not mask another
// declaration, a staticvar keeps its value across runs, varinst set/add/mul
// create a variable they write, loops run their body at least once.
#include "runtime/interpreter.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

namespace tessera::runtime {

namespace {

std::string quote(const std::string& s) { return "'" + s + "'"; }

SourceLoc either(SourceLoc preferred, SourceLoc fallback) { return preferred.valid() ? preferred : fallback; }

} // namespace

void Target::launch(const Launch& launch) {
  if (launch.graphs.size() == 1) return execute(*launch.graphs.front());
  std::string names;
  for (const EpochIo* io : launch.graphs) names += (names.empty() ? "" : ", ") + quote(io->graph().name);
  throw RuntimeError("launch-unsupported", launch.graphs.empty() ? SourceLoc{} : launch.graphs.front()->loc(),
                     "the " + name() + " target cannot run several graphs at once yet: temporal epoch " +
                         std::to_string(launch.temporalGraph) + " launches graphs " + names);
}

// One call of Interpreter::run: program-local variables, the loop stack and,
// per queue, the settings of its latest execute in this run.
class ProgramRun {
public:
  ProgramRun(Interpreter& in, const netlist::Program& program, const std::map<std::string, int64_t>& params)
      : in_(in), program_(program), params_(params), statics_(in.staticVars_[program.name]) {}

  void run();

private:
  struct Loop {
    size_t body;       // index of the first instruction of the body
    int64_t remaining; // iterations left, the current one included
    SourceLoc loc;
  };

  std::string element() const { return "program " + quote(program_.name); }
  int64_t* variable(const std::string& name);
  int64_t resolve(const netlist::Operand64& o, SourceLoc fallback);
  QueueSettingsValues resolve(const netlist::QueueSetting& qs, SourceLoc fallback);

  void checkParams();
  void declare(const netlist::Instruction& ins);
  void varinst(const netlist::Instruction& ins);
  void execute(const netlist::Instruction& ins, const netlist::Instruction* next);
  bool joinsLaunch(const netlist::Instruction& next) const;
  void launch();
  void allocation(const netlist::Instruction& ins);
  void reprogramBound(const std::string& var, SourceLoc loc);

  Interpreter& in_;
  const netlist::Program& program_;
  const std::map<std::string, int64_t>& params_;
  std::map<std::string, int64_t>& statics_; // persists across runs
  std::map<std::string, int64_t> locals_;   // var, param and implicitly created variables
  std::vector<Loop> loops_;
  std::map<std::string, const netlist::QueueSetting*> bound_;
  // The launch being gathered: executes of one temporal graph, each graph once.
  std::vector<std::unique_ptr<EpochIo>> pending_;
  uint32_t pendingTemporal_ = 0;
};

int64_t* ProgramRun::variable(const std::string& name) {
  if (auto it = locals_.find(name); it != locals_.end()) return &it->second;
  if (auto it = statics_.find(name); it != statics_.end()) return &it->second;
  return nullptr;
}

int64_t ProgramRun::resolve(const netlist::Operand64& o, SourceLoc fallback) {
  if (!o.isVar) return o.value;
  if (int64_t* v = variable(o.var)) return *v;
  throw RuntimeError("undefined-variable", either(o.loc, fallback),
                     element() + ": " + o.var + " is not defined (declare it with var, staticvar or param before use)");
}

QueueSettingsValues ProgramRun::resolve(const netlist::QueueSetting& qs, SourceLoc fallback) {
  fallback = either(qs.loc, fallback);
  auto flag = [&](const std::optional<netlist::Operand64>& o) { return o && resolve(*o, fallback) != 0; };
  auto value = [&](const std::optional<netlist::Operand64>& o) -> std::optional<int64_t> {
    if (!o) return std::nullopt;
    return resolve(*o, fallback);
  };
  QueueSettingsValues v;
  v.prologue = flag(qs.prologue);
  v.epilogue = flag(qs.epilogue);
  v.zero = flag(qs.zero);
  v.readOnly = flag(qs.readOnly);
  v.rdPtrLocal = value(qs.rdPtrLocal);
  v.rdPtrGlobal = value(qs.rdPtrGlobal);
  v.wrPtrGlobal = value(qs.wrPtrGlobal);
  v.globalRdptrAutoinc = value(qs.globalRdptrAutoinc);
  v.rdPtrAutoinc = value(qs.rdPtrAutoinc);
  v.globalWrptrAutoinc = value(qs.globalWrptrAutoinc);
  return v;
}

void ProgramRun::checkParams() {
  std::set<std::string> declared;
  for (const auto& ins : program_.instructions)
    if (ins.kind == netlist::InstrKind::Param)
      for (const auto& v : ins.vars) declared.insert(v.name);
  for (const auto& [name, value] : params_) {
    if (declared.count(name)) continue;
    std::string list;
    for (const auto& d : declared) list += (list.empty() ? "" : ", ") + d;
    throw RuntimeError("param-unknown", program_.loc,
                       element() + " has no param " + name + " (" + (list.empty() ? "it declares none" : "it declares " + list) + ")");
  }
}

void ProgramRun::declare(const netlist::Instruction& ins) {
  using netlist::InstrKind;
  for (const auto& v : ins.vars) {
    const bool isLocal = locals_.count(v.name) > 0, isStatic = statics_.count(v.name) > 0;
    // A staticvar seen again (a later run, or a loop) keeps its value; any
    // other redeclaration would hide a variable, which BUDA rejects.
    if (ins.kind == InstrKind::StaticVar && isStatic) continue;
    if (isLocal || isStatic)
      throw RuntimeError("variable-redeclared", either(v.loc, ins.loc),
                         element() + ": " + v.name + " is declared again (it is already a " +
                             (isStatic ? "staticvar" : "var or param") + ")");
    switch (ins.kind) {
    case InstrKind::Var:
      locals_[v.name] = v.init.value_or(0);
      break;
    case InstrKind::StaticVar:
      statics_[v.name] = v.init.value_or(0);
      break;
    default: { // param
      auto p = params_.find(v.name);
      if (p == params_.end())
        throw RuntimeError("param-missing", either(v.loc, ins.loc),
                           element() + " needs param " + v.name + ", which was not given");
      locals_[v.name] = p->second;
    }
    }
  }
}

void ProgramRun::varinst(const netlist::Instruction& ins) {
  using netlist::VarOpcode;
  const bool binary = ins.opcode == VarOpcode::Add || ins.opcode == VarOpcode::Mul || ins.opcode == VarOpcode::IncWrap;
  if (ins.args.size() < (binary ? 2u : 1u))
    throw RuntimeError("program-syntax", ins.loc, element() + ": varinst " + std::string(netlist::varOpcodeName(ins.opcode)) +
                                                      " is missing an argument");
  const int64_t a = resolve(ins.args[0], ins.loc);
  const int64_t b = binary ? resolve(ins.args[1], ins.loc) : 0;
  int64_t* out = variable(ins.out);
  auto current = [&]() -> int64_t {
    if (!out)
      throw RuntimeError("undefined-variable", either(ins.outLoc, ins.loc),
                         element() + ": varinst " + std::string(netlist::varOpcodeName(ins.opcode)) + " reads " + ins.out +
                             ", which is not defined (declare it with var, staticvar or param before use)");
    return *out;
  };
  auto overflow = [&]() {
    return RuntimeError("varinst-overflow", ins.loc, element() + ": varinst result does not fit in 64 bits");
  };
  int64_t result = 0;
  switch (ins.opcode) {
  case VarOpcode::Set:
    result = a;
    break;
  case VarOpcode::Add:
    if (__builtin_add_overflow(a, b, &result)) throw overflow();
    break;
  case VarOpcode::Mul:
    if (__builtin_mul_overflow(a, b, &result)) throw overflow();
    break;
  case VarOpcode::Inc:
    if (__builtin_add_overflow(current(), a, &result)) throw overflow();
    break;
  case VarOpcode::IncWrap: {
    int64_t sum = 0;
    if (__builtin_add_overflow(current(), a, &sum)) throw overflow();
    if (b <= 0)
      throw RuntimeError("varinst-wrap", either(ins.args[1].loc, ins.loc),
                         element() + ": incwrap wraps at " + std::to_string(b) + "; the wrap value must be positive");
    result = ((sum % b) + b) % b; // BUDA lifts a negative increment by multiples of the wrap
    break;
  }
  }
  // set/add/mul create the variable they write, as the BUDA runtime does.
  if (out) *out = result;
  else locals_[ins.out] = result;
  reprogramBound(ins.out, ins.loc);
}

// A pointer bound to a variable follows it as soon as it changes (BUDA's
// golden model does the same): the pop lands right after the varinst, so the
// host sees the space before the next execute.
void ProgramRun::reprogramBound(const std::string& var, SourceLoc loc) {
  auto uses = [&](const std::optional<netlist::Operand64>& o) { return o && o->isVar && o->var == var; };
  for (const auto& [queue, qs] : bound_) {
    if (!uses(qs->rdPtrGlobal) && !uses(qs->rdPtrLocal) && !uses(qs->wrPtrGlobal)) continue;
    const QueueState* q = in_.store_->find(queue);
    if (!q || !q->allocated()) continue;
    in_.store_->programPointers(queue, resolve(*qs, loc), loc);
  }
}

void ProgramRun::execute(const netlist::Instruction& ins, const netlist::Instruction* next) {
  const std::string& name = ins.graphName.value;
  auto g = std::find_if(in_.nl_->graphs.begin(), in_.nl_->graphs.end(),
                        [&](const netlist::Graph& x) { return x.name == name; });
  if (g == in_.nl_->graphs.end())
    throw RuntimeError("unknown-graph", either(ins.graphName.loc, ins.loc),
                       element() + ": execute names graph " + quote(name) + ", which does not exist");
  const int64_t n = g->inputCount.present() ? g->inputCount.value : 1;
  if (n < 1)
    throw RuntimeError("input-count", either(g->inputCount.loc, ins.loc),
                       "graph " + quote(name) + " has input_count " + std::to_string(n) + "; it must be at least 1");

  std::map<std::string, QueueSettingsValues> settings;
  for (const auto& qs : ins.queueSettings) {
    if (!in_.store_->find(qs.queue))
      throw RuntimeError("unknown-queue", either(qs.loc, ins.loc),
                         element() + ": queue_settings name " + quote(qs.queue) + ", which is not a queue");
    settings[qs.queue] = resolve(qs, ins.loc);
  }
  if (in_.executes_ >= in_.maxExecutes)
    throw RuntimeError("runaway-program", ins.loc,
                       element() + ": more than " + std::to_string(in_.maxExecutes) + " executes; stopping a runaway program");
  ++in_.executes_;
  for (const auto& qs : ins.queueSettings) bound_[qs.queue] = &qs;
  if (in_.trace) in_.trace("execute " + name + " (input_count " + std::to_string(n) + ")");

  pendingTemporal_ = in_.temporal_.find(name).value_or(0);
  pending_.push_back(std::make_unique<EpochIo>(*in_.store_, *g, n, std::move(settings), ins.loc));
  if (!next || !joinsLaunch(*next)) launch();
}

// The next instruction joins the launch being gathered when it executes
// another graph of the same temporal graph (docs/runtime.md "Launches").
bool ProgramRun::joinsLaunch(const netlist::Instruction& next) const {
  if (next.kind != netlist::InstrKind::Execute) return false;
  auto tg = in_.temporal_.find(next.graphName.value);
  if (!tg || *tg != pendingTemporal_) return false;
  return std::none_of(pending_.begin(), pending_.end(),
                      [&](const auto& io) { return io->graph().name == next.graphName.value; });
}

void ProgramRun::launch() {
  std::vector<std::unique_ptr<EpochIo>> ios = std::move(pending_);
  pending_.clear();
  Launch l{pendingTemporal_, {}};
  for (auto& io : ios) l.graphs.push_back(io.get());
  if (in_.trace && ios.size() > 1) {
    std::string names;
    for (const auto& io : ios) names += " " + io->graph().name;
    in_.trace("launch temporal epoch " + std::to_string(l.temporalGraph) + ":" + names);
  }
  ++in_.launches_;
  for (auto& io : ios) in_.hooks_->beforeExecute(io->graph(), *in_.store_);
  for (auto& io : ios) io->begin();
  in_.target_->launch(l);
  for (auto& io : ios) io->end();
  for (auto& io : ios) in_.hooks_->afterExecute(io->graph(), *in_.store_);
}

void ProgramRun::allocation(const netlist::Instruction& ins) {
  const bool allocate = ins.kind == netlist::InstrKind::AllocateQueue;
  for (const auto& q : ins.queues) {
    SourceLoc loc = either(q.loc, ins.loc);
    if (!in_.store_->find(q.value))
      throw RuntimeError("unknown-queue", loc,
                         element() + ": " + (allocate ? "allocate_queue" : "deallocate_queue") + " names " + quote(q.value) +
                             ", which is not a queue");
    if (allocate) {
      in_.store_->allocate(q.value, loc);
    } else {
      in_.store_->deallocate(q.value, loc);
      bound_.erase(q.value); // its settings died with it
    }
  }
}

void ProgramRun::run() {
  using netlist::InstrKind;
  checkParams();
  const auto& code = program_.instructions;
  int64_t steps = 0;
  for (size_t pc = 0; pc < code.size();) {
    const netlist::Instruction& ins = code[pc];
    if (++steps > in_.maxSteps)
      throw RuntimeError("runaway-program", ins.loc,
                         element() + ": more than " + std::to_string(in_.maxSteps) +
                             " instructions in one run; stopping a runaway program");
    switch (ins.kind) {
    case InstrKind::Var:
    case InstrKind::StaticVar:
    case InstrKind::Param:
      declare(ins);
      break;
    case InstrKind::VarInst:
      varinst(ins);
      break;
    case InstrKind::Loop: {
      const int64_t count = resolve(ins.loopCount, ins.loc);
      // BUDA's netlist_program rejects counts below 1: a loop body always runs.
      if (count < 1)
        throw RuntimeError("loop-count", either(ins.loopCount.loc, ins.loc),
                           element() + ": loop count is " + std::to_string(count) + "; it must be at least 1");
      if (static_cast<int64_t>(loops_.size()) >= in_.maxLoopDepth)
        throw RuntimeError("loop-depth", ins.loc,
                           element() + ": loops nest deeper than " + std::to_string(in_.maxLoopDepth));
      loops_.push_back({pc + 1, count, ins.loc});
      break;
    }
    case InstrKind::EndLoop:
      if (loops_.empty()) throw RuntimeError("loop-balance", ins.loc, element() + ": endloop without a matching loop");
      if (--loops_.back().remaining > 0) {
        pc = loops_.back().body;
        continue;
      }
      loops_.pop_back();
      break;
    case InstrKind::Execute:
      execute(ins, pc + 1 < code.size() ? &code[pc + 1] : nullptr);
      break;
    case InstrKind::AllocateQueue:
    case InstrKind::DeallocateQueue:
      allocation(ins);
      break;
    case InstrKind::EndProgram:
      return; // instructions after it never run
    }
    ++pc;
  }
  if (!loops_.empty())
    throw RuntimeError("loop-balance", loops_.back().loc, element() + ": loop has no matching endloop");
}

// ====================================================================== Interpreter
Interpreter::Interpreter(const netlist::Netlist& nl, QueueStore& store, Target& target, HostHooks& hooks, Arch arch)
    : nl_(&nl), store_(&store), target_(&target), hooks_(&hooks), temporal_(netlist::deriveTemporalGraphs(nl, arch)) {}

Interpreter::Interpreter(const netlist::Netlist& nl, QueueStore& store, Target& target, HostHooks& hooks)
    : Interpreter(nl, store, target, hooks, nl.devices.arch.empty() ? Arch::Grayskull : nl.devices.arch.front().value) {}

void Interpreter::run(const netlist::Program& program, const std::map<std::string, int64_t>& params) {
  ProgramRun(*this, program, params).run();
}

} // namespace tessera::runtime
