#include "chromium_util.h"

#include <png.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "analysis_test_util.h"

namespace xw::testing {
namespace {

std::string Chromium(const std::string& profile_dir) {
  return "chromium --headless --no-sandbox --disable-gpu --disable-quic "
         "--no-first-run --disable-background-networking "
         "--disable-component-update --disable-sync --hide-scrollbars "
         "--user-data-dir=" +
         profile_dir + " ";
}

// Appended to a copy of the page: one line per text outside its chart.
constexpr const char* kMeasure = R"js(<script>
(() => {
  const out = [];
  let n = 0;
  for (const svg of document.querySelectorAll('svg[data-plot]')) {
    const r = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll('text')) {
      ++n;
      const b = t.getBoundingClientRect();
      if (b.left < r.left - 0.5 || b.right > r.right + 0.5 ||
          b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5) {
        out.push(svg.dataset.plot + ': ' + t.textContent + ' [' +
                 Math.round(b.left - r.left) + '..' + Math.round(b.right - r.left) + ' of ' +
                 Math.round(r.width) + ']');
      }
    }
  }
  const add = (id, text) => {
    const p = document.createElement('pre');
    p.id = id;
    p.textContent = text;
    document.body.appendChild(p);
  };
  add('xw-clipped', out.join('\n'));
  add('xw-measured', String(n));
})();
</script>)js";

}  // namespace

bool DumpDom(const std::string& html_path, std::string* dom) {
  return Run(Chromium(html_path + ".chromium") + "--dump-dom file://" + html_path +
                 " 2>/dev/null",
             dom) == 0;
}

std::vector<std::string> ClippedTexts(const std::string& html_path, int* measured) {
  *measured = -1;
  std::string html = ReadFile(html_path);
  const size_t end = html.rfind("</body>");
  html.insert(end == std::string::npos ? html.size() : end, kMeasure);
  const std::string copy = html_path + ".measure.html";
  std::ofstream(copy) << html;
  std::string dom;
  if (!DumpDom(copy, &dom)) return {"chromium failed"};
  std::smatch m;
  if (std::regex_search(dom, m, std::regex("<pre id=\"xw-measured\">([0-9]+)</pre>"))) {
    *measured = std::atoi(m[1].str().c_str());
  }
  std::vector<std::string> clipped;
  if (std::regex_search(dom, m, std::regex("<pre id=\"xw-clipped\">([^<]*)</pre>"))) {
    std::stringstream lines(m[1].str());
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) clipped.push_back(line);
    }
  }
  return clipped;
}

int64_t Pixels::Count(const std::string& hex, int tolerance) const {
  const int r = std::stoi(hex.substr(1, 2), nullptr, 16),
            g = std::stoi(hex.substr(3, 2), nullptr, 16),
            b = std::stoi(hex.substr(5, 2), nullptr, 16);
  int64_t n = 0;
  for (size_t i = 0; i + 3 < rgba.size(); i += 4) {
    n += std::abs(rgba[i] - r) <= tolerance && std::abs(rgba[i + 1] - g) <= tolerance &&
         std::abs(rgba[i + 2] - b) <= tolerance;
  }
  return n;
}

int64_t Pixels::NonWhite(int tolerance) const {
  int64_t n = 0;
  for (size_t i = 0; i + 3 < rgba.size(); i += 4) {
    n += 255 - rgba[i] > tolerance || 255 - rgba[i + 1] > tolerance ||
         255 - rgba[i + 2] > tolerance;
  }
  return n;
}

Pixels Screenshot(const std::string& html_path, int width, int height) {
  const std::string png = html_path + ".png";
  std::remove(png.c_str());
  Run(Chromium(html_path + ".chromium") + "--screenshot=" + png + " --window-size=" +
      std::to_string(width) + "," + std::to_string(height) + " file://" + html_path +
      " >/dev/null 2>&1");
  Pixels p;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, png.c_str())) return p;
  image.format = PNG_FORMAT_RGBA;
  std::vector<uint8_t> buf(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, buf.data(), 0, nullptr)) {
    png_image_free(&image);
    return p;
  }
  p.width = static_cast<int>(image.width);
  p.height = static_cast<int>(image.height);
  p.rgba = std::move(buf);
  return p;
}

}  // namespace xw::testing
