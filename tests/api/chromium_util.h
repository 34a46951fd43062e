// Headless Chromium checks of rendered HTML for the api tests: the DOM after
// load, the text of every chart measured against its figure's bounds, and a
// screenshot read back as pixels (libpng).
#ifndef XWIRES_TESTS_API_CHROMIUM_UTIL_H_
#define XWIRES_TESTS_API_CHROMIUM_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace xw::testing {

// The DOM of `html_path` after Chromium loaded it (--dump-dom); false if
// Chromium failed.
bool DumpDom(const std::string& html_path, std::string* dom);

// Renders a copy of `html_path` with a script that measures, in the laid-out
// page, the box of every <text> of every <svg data-plot> (transforms and
// rotation included) against its svg's box. Returns "plot-id: text" for each
// text that leaves its figure; *measured receives how many were measured
// (-1 if Chromium failed).
std::vector<std::string> ClippedTexts(const std::string& html_path, int* measured);

struct Pixels {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;  // row-major, 4 bytes a pixel
  // Pixels within `tolerance` (max channel difference) of colour #rrggbb.
  int64_t Count(const std::string& hex, int tolerance) const;
  // Pixels that differ from white by more than `tolerance` in some channel.
  int64_t NonWhite(int tolerance = 8) const;
};

// A width x height screenshot of `html_path` (its top), read back; empty
// Pixels if Chromium or libpng failed.
Pixels Screenshot(const std::string& html_path, int width, int height);

}  // namespace xw::testing

#endif  // XWIRES_TESTS_API_CHROMIUM_UTIL_H_
