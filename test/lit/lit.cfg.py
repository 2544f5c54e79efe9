# lit configuration for Tessera's tool tests. Each test is a file whose
# `RUN:` lines call a tool and pipe to FileCheck; `not` inverts exit codes.
import os
import lit.formats

config.name = "tessera"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".yaml", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)

site = lit_config.params.get("site")
if site:
    lit_config.load_config(config, site)
config.test_exec_root = os.path.join(config.tessera_obj_root, "test", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", "")])

tools = {
    "netlist-check": os.path.join(config.tessera_obj_root, "tools", "netlist-check", "netlist-check"),
    "loader": os.path.join(config.tessera_obj_root, "tools", "loader", "loader"),
    "net2hlks": os.path.join(config.tessera_obj_root, "tools", "net2hlks", "net2hlks"),
    "hlkc": os.path.join(config.tessera_obj_root, "tools", "hlkc", "hlkc"),
    "tensix-run": os.path.join(config.tessera_obj_root, "tools", "tensix-run", "tensix-run"),
    "net2pipe": os.path.join(config.tessera_obj_root, "tools", "net2pipe", "net2pipe"),
    "pipegen": os.path.join(config.tessera_obj_root, "tools", "pipegen", "pipegen"),
    "blobgen": os.path.join(config.tessera_obj_root, "tools", "blobgen", "blobgen"),
}
for name, path in tools.items():
    config.substitutions.append(("%" + name, path))
config.substitutions.append(("%srcroot", config.tessera_src_root))
config.substitutions.append(("%objroot", config.tessera_obj_root))
config.substitutions.append(("%python", config.python))

# A pseudo-terminal for tests of terminal-only output (util-linux `script`).
import shutil
if shutil.which("script"):
    config.available_features.add("script")

# Tests that read the shared BUDA corpus need it beside the checkout.
if os.path.isdir(config.corpus_dir):
    config.available_features.add("corpus")
    config.substitutions.append(("%corpus", config.corpus_dir))

# BUDA's own net2pipe/pipegen2/blobgen2 (../shared/anchor-tools beside the
# checkout, never in CI): tests that run them declare REQUIRES: anchor-tools.
anchor_tools = os.path.join(os.path.dirname(config.corpus_dir), "anchor-tools")
if os.path.isfile(os.path.join(anchor_tools, "run.sh")):
    config.available_features.add("anchor-tools")
    config.substitutions.append(("%anchor_tools", anchor_tools))

# loader --mpi: the build has MPI and mpirun is installed (scripts/setup.sh).
# %mpirun N runs N ranks on this machine, as root too (CI), more ranks than
# cores allowed, ranks yielding the core while they wait.
if getattr(config, "have_mpi", "").upper() in ("TRUE", "ON", "1") and shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun",
        "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 "
        "mpirun --oversubscribe --bind-to none -np"))

# An ASan+UBSan build (-DTESSERA_SANITIZE=ON, CI's second leg): every tool
# runs 2-5x slower, so the few corpus-scale runs declare UNSUPPORTED: asan
# (each says why); every reader and tool test still runs. A sanitizer report
# aborts the tool (halt_on_error, -fno-sanitize-recover), which fails its test.
if getattr(config, "sanitize", "").upper() in ("TRUE", "ON", "1"):
    config.available_features.add("asan")
    config.environment["ASAN_OPTIONS"] = "halt_on_error=1:detect_leaks=1:abort_on_error=0"
    config.environment["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"

# Build-fault tests (test/faults/fault_inject.cpp): %fault_inject preloads the
# write-fault injector; TESSERA_FAULT_* in the environment arm it.
fault_inject = getattr(config, "fault_inject", "")
if fault_inject and os.path.isfile(fault_inject):
    config.available_features.add("fault-inject")
    config.substitutions.append(("%fault_inject", "env LD_PRELOAD=" + fault_inject))
# A private mount namespace (util-linux unshare) lets a test mount a small
# tmpfs without root: the full-disk test.
import subprocess
if shutil.which("unshare") and subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0:
    config.available_features.add("userns")
# loader --report: a headless Chromium opens the HTML page (scripts/setup.sh
# installs Debian's `chromium`). %chromium-dom FILE prints the page's DOM after
# its script ran.
_chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if _chromium:
    config.available_features.add("chromium")
    config.substitutions.append(("%chromium-dom",
        _chromium + " --headless --no-sandbox --disable-gpu --virtual-time-budget=2000 --dump-dom"))
