#include "conformance_exchange.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

namespace xw::conformance {
namespace {

constexpr char kMagic[8] = {'X', 'W', 'T', 'E', 'N', 'S', '0', '1'};
constexpr int kMaxRank = 8;

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// A bounds-checked reader over the file's bytes.
class Reader {
 public:
  Reader(const std::string& path, const std::string& bytes) : path_(path), bytes_(bytes) {}
  template <typename T>
  Status Get(T* v, const char* what) {
    XW_RETURN_IF_ERROR(Need(sizeof(T), what));
    std::memcpy(v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::OK();
  }
  Status Bytes(size_t n, const char* what, const char** p) {
    XW_RETURN_IF_ERROR(Need(n, what));
    *p = bytes_.data() + pos_;
    pos_ += n;
    return Status::OK();
  }

 private:
  Status Need(size_t n, const char* what) const {
    if (bytes_.size() - pos_ < n) {
      return Status::Corruption(path_ + ": truncated exchange file (reading " + what + ")");
    }
    return Status::OK();
  }
  const std::string& path_;
  const std::string& bytes_;
  size_t pos_ = 0;
};

}  // namespace

Status WriteExchange(const std::string& path, const NamedTensors& tensors) {
  std::string out(kMagic, sizeof(kMagic));
  Put<uint32_t>(&out, static_cast<uint32_t>(tensors.size()));
  for (const NamedTensor& t : tensors) {
    Put<uint32_t>(&out, static_cast<uint32_t>(t.name.size()));
    out += t.name;
    Put<uint8_t>(&out, t.is_int64 ? 1 : 0);
    Put<uint8_t>(&out, static_cast<uint8_t>(t.value.rank()));
    for (int d = 0; d < t.value.rank(); ++d) Put<int64_t>(&out, t.value.dim(d));
    if (t.is_int64) {
      for (int64_t i = 0; i < t.value.size(); ++i) {
        Put<int64_t>(&out, static_cast<int64_t>(t.value[i]));
      }
    } else {
      out.append(reinterpret_cast<const char*>(t.value.data()), sizeof(float) * t.value.size());
    }
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  f.close();
  if (!f) return Status::IOError(path + ": cannot write the exchange file");
  return Status::OK();
}

Result<NamedTensors> ReadExchange(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound(path + ": file not found");
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Reader r(path, bytes);
  const char* magic = nullptr;
  XW_RETURN_IF_ERROR(r.Bytes(sizeof(kMagic), "magic", &magic));
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption(path + ": not an exchange file (magic is not XWTENS01)");
  }
  uint32_t count = 0;
  XW_RETURN_IF_ERROR(r.Get(&count, "tensor count"));
  NamedTensors out;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t len = 0;
    uint8_t dtype = 0, rank = 0;
    const char* name = nullptr;
    XW_RETURN_IF_ERROR(r.Get(&len, "name length"));
    XW_RETURN_IF_ERROR(r.Bytes(len, "name", &name));
    XW_RETURN_IF_ERROR(r.Get(&dtype, "dtype"));
    XW_RETURN_IF_ERROR(r.Get(&rank, "rank"));
    const std::string tname(name, len);
    if (dtype > 1 || rank > kMaxRank) {
      return Status::Corruption(path + ": tensor '" + tname + "': bad dtype or rank");
    }
    Shape shape(rank);
    int64_t n = 1;
    for (auto& d : shape) {
      XW_RETURN_IF_ERROR(r.Get(&d, "dims"));
      if (d < 0 || d > (int64_t{1} << 32)) {
        return Status::Corruption(path + ": tensor '" + tname + "': bad dimension");
      }
      n *= d;
    }
    Tensor value(shape);
    if (dtype == 1) {
      for (int64_t k = 0; k < n; ++k) {
        int64_t v = 0;
        XW_RETURN_IF_ERROR(r.Get(&v, "int64 elements"));
        value[k] = static_cast<float>(v);
      }
    } else {
      const char* p = nullptr;
      XW_RETURN_IF_ERROR(r.Bytes(sizeof(float) * n, "float32 elements", &p));
      std::memcpy(value.data(), p, sizeof(float) * n);
    }
    out.push_back({tname, std::move(value), dtype == 1});
  }
  return out;
}

namespace {

// RelativeError's measure with the reference's elements as doubles,
// ref_at(i) (float tensors widened, or float64 references).
template <class RefAt>
double MaxNormRelative(const Tensor& ours, RefAt ref_at, double scale) {
  double num = 0, den = scale;
  for (int64_t i = 0; i < ours.size(); ++i) {
    const double r = ref_at(i);
    const double d = std::fabs(static_cast<double>(ours[i]) - r);
    if (std::isnan(d)) return INFINITY;
    num = std::max(num, d);
    den = std::max(den, std::fabs(r));
  }
  return den > 0 ? num / den : num;
}

}  // namespace

double RelativeError(const Tensor& ours, const Tensor& ref, double scale) {
  if (ours.shape() != ref.shape()) return INFINITY;
  return MaxNormRelative(ours, [&](int64_t i) { return static_cast<double>(ref[i]); }, scale);
}

std::string ModuleOf(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? "" : name.substr(0, dot);
}

namespace {

// A reference tensor in double: its shape and elements.
struct RefTensor {
  Shape shape;
  std::vector<double> v;
};

// StateError's measure over float references widened to double (ref) or
// float64 references (RefTensor): RelativeError of each tensor of `ours`
// against its module's scale, the worst one named.
double WorstOf(const NamedTensors& ours, const std::map<std::string, RefTensor>& ref,
               std::string* worst) {
  std::map<std::string, double> scale;  // module -> max |ref| over its float tensors
  for (const auto& [name, t] : ref) {
    double& m = scale[ModuleOf(name)];
    for (double x : t.v) m = std::max(m, std::fabs(x));
  }
  double error = 0;
  worst->clear();
  for (const NamedTensor& t : ours) {
    auto it = ref.find(t.name);
    if (it == ref.end() || t.is_int64) continue;
    const std::vector<double>& r = it->second.v;
    const double e = t.value.shape() == it->second.shape
                         ? MaxNormRelative(t.value, [&](int64_t i) { return r[i]; },
                                           scale[ModuleOf(t.name)])
                         : INFINITY;
    if (e > error || worst->empty()) {
      error = std::max(error, e);
      *worst = t.name;
    }
  }
  return error;
}

}  // namespace

double StateError(const NamedTensors& ours, const NamedTensors& ref, std::string* worst) {
  std::map<std::string, RefTensor> wide;
  for (const NamedTensor& t : ref) {
    if (t.is_int64) continue;
    RefTensor& w = wide[t.name];
    w.shape = t.value.shape();
    w.v.assign(t.value.data(), t.value.data() + t.value.size());
  }
  return WorstOf(ours, wide, worst);
}

double StateErrorF64(const NamedTensors& ours, const SplitState& ref, std::string* worst) {
  std::map<std::string, const Tensor*> lo;
  for (const NamedTensor& t : ref.lo) lo[t.name] = &t.value;
  std::map<std::string, RefTensor> wide;
  for (const NamedTensor& t : ref.hi) {
    auto it = lo.find(t.name);
    if (t.is_int64 || it == lo.end() || it->second->shape() != t.value.shape()) continue;
    RefTensor& w = wide[t.name];
    w.shape = t.value.shape();
    w.v.resize(t.value.size());
    for (int64_t i = 0; i < t.value.size(); ++i) {
      w.v[i] = static_cast<double>(t.value[i]) + (*it->second)[i];
    }
  }
  return WorstOf(ours, wide, worst);
}

}  // namespace xw::conformance
