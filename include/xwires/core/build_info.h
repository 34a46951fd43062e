// Facts about this build that every stored run records, so that a result can
// be traced to the toolkit version, ISA and compiler that produced it.
#ifndef XWIRES_CORE_BUILD_INFO_H_
#define XWIRES_CORE_BUILD_INFO_H_

#include <string>

namespace xw {

struct BuildInfo {
  std::string toolkit_version;  // e.g. "0.1.0"
  std::string isa;              // "native:<cpu flags summary>" or "x86-64"
  std::string compiler;         // e.g. "GNU 12.2.0"
  std::string build_type;       // "Release", ...
  std::string eigen_version;
  std::string tbb_version;
};

// Thread-safe; computed once.
const BuildInfo& GetBuildInfo();

// A compact machine fingerprint: ISA, compiler and library versions as JSON
// text (keys: toolkit, isa, compiler, build_type, eigen, tbb, cpu_model,
// threads, kernel_target = "hwy:<Highway target the kernels dispatched to>",
// e.g. "hwy:AVX2").
std::string MachineFingerprintJson(int threads);

}  // namespace xw

#endif  // XWIRES_CORE_BUILD_INFO_H_
