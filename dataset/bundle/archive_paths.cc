// TempDir and entry-name validation: the file-system side of the safe reader.
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "archive_io.h"

namespace xw::bundle {

Result<TempDir> TempDir::Create(const std::filesystem::path& parent,
                                std::string_view prefix) {
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) {
    return Status::IOError("cannot create temp parent '" + parent.string() +
                           "': " + ec.message());
  }
  std::string templ = (parent / (std::string(prefix) + "XXXXXX")).string();
  // mkdtemp creates the directory with mode 0700: private to this user.
  if (mkdtemp(templ.data()) == nullptr) {
    return Status::IOError("cannot create a temp directory under '" +
                           parent.string() + "': " + std::strerror(errno));
  }
  return TempDir(std::filesystem::path(templ));
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

TempDir::~TempDir() { Remove(); }

void TempDir::Remove() {
  if (path_.empty()) return;
  std::error_code ec;  // best effort: a destructor cannot report
  std::filesystem::remove_all(path_, ec);
  path_.clear();
}

std::string PrintableName(std::string_view name) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : name.substr(0, 200)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (name.size() > 200) out += "...";
  return out;
}

Status WriteFileBytes(const std::filesystem::path& path,
                      std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Status::IOError("cannot write '" + path.string() + "'");
  return Status::OK();
}

namespace {
bool IsSafeChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

Status Bad(std::string_view name, const std::string& why) {
  return Status::InvalidArgument("entry '" + PrintableName(name) + "': " + why);
}
}  // namespace

Status ValidateEntryName(std::string_view name, bool is_dir,
                         const ArchiveLimits& limits) {
  if (name.empty()) return Bad(name, "empty path");
  if (name.size() > limits.max_path_bytes) {
    return Bad(
        name.substr(0, 64),
        "path longer than " + std::to_string(limits.max_path_bytes) + " bytes");
  }
  if (name.front() == '/') return Bad(name, "absolute path");
  std::string_view rest = name;
  if (is_dir && rest.back() == '/') rest.remove_suffix(1);
  size_t depth = 0;
  while (true) {
    size_t slash = rest.find('/');
    std::string_view comp = rest.substr(0, slash);
    if (comp.empty()) return Bad(name, "empty path component");
    if (comp == "..") return Bad(name, "'..' component escapes the bundle");
    if (comp == ".") return Bad(name, "'.' component");
    for (char c : comp) {
      if (!IsSafeChar(c)) {
        return Bad(name,
                   "character outside [A-Za-z0-9._-] in a path component");
      }
    }
    if (++depth > limits.max_path_depth) {
      return Bad(name, "deeper than " + std::to_string(limits.max_path_depth) +
                           " components");
    }
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return Status::OK();
}

const ExtractedFile* ExtractedArchive::Find(std::string_view name) const {
  for (const ExtractedFile& f : files) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace xw::bundle
