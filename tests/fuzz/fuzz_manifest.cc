// libFuzzer target: ParseManifest on arbitrary bytes. It must never crash,
// leak or hit undefined behaviour, and whatever it accepts must survive a
// write/parse round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "dataset/bundle/bundle_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  xw::bundle::ManifestLimits limits;
  limits.max_bytes = 1 << 16;
  auto m = xw::bundle::ParseManifest(text, limits);
  if (!m.ok()) return 0;
  auto again = xw::bundle::ManifestToJson(*m);
  if (!again.ok()) std::abort();  // accepted fields must be writable
  auto m2 = xw::bundle::ParseManifest(*again);
  if (!m2.ok() || m2->files.size() != m->files.size() ||
      m2->profiles != m->profiles || m2->contributor != m->contributor ||
      m2->machine_json != m->machine_json ||
      m2->trial_count != m->trial_count) {
    std::abort();
  }
  return 0;
}
