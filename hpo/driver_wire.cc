// Byte encodings of search histories and trial records, for the messages
// ranks exchange in a distributed search. Little-endian, length-prefixed; a
// decoder rejects truncated or trailing bytes.
#include <cstring>

#include "driver_internal.h"

namespace xw::hpo::internal {

void ByteWriter::U64(uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void ByteWriter::F64(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  U64(u);
}

void ByteWriter::Str(const std::string& s) {
  U64(s.size());
  out_ += s;
}

void ByteWriter::Floats(const float* p, int64_t n) {
  out_.append(reinterpret_cast<const char*>(p),
              static_cast<size_t>(n) * sizeof(float));
}

bool ByteReader::Take(size_t n) {
  if (!ok_ || b_.size() - pos_ < n) {
    ok_ = false;
    return false;
  }
  return true;
}

uint64_t ByteReader::U64() {
  if (!Take(8)) return 0;
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t{static_cast<unsigned char>(b_[pos_ + i])} << (8 * i);
  pos_ += 8;
  return v;
}

double ByteReader::F64() {
  uint64_t u = U64();
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

std::string ByteReader::Str() {
  const uint64_t n = U64();
  if (!Take(n)) return "";
  std::string s = b_.substr(pos_, n);
  pos_ += n;
  return s;
}

void ByteReader::Floats(float* p, int64_t n) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  if (n < 0 || !Take(bytes)) return;
  std::memcpy(p, b_.data() + pos_, bytes);
  pos_ += bytes;
}

namespace {

Status Truncated(const std::string& what) {
  return Status::Corruption("search message: truncated or malformed " + what);
}

void PutModel(ByteWriter& w, const ModelRecord& m) {
  w.Str(m.profile);
  w.Str(m.profile_json);
  w.U64(m.external);
  w.Str(m.status);
  for (double v :
       {m.train_acc, m.test_acc, m.train_loss, m.test_loss, m.wall_time_s})
    w.F64(v);
  w.U64(m.curves.size());
  for (const EpochMetrics& e : m.curves) {
    w.I64(e.epoch);
    for (double v : {e.train_loss_mean, e.train_loss_last, e.train_acc,
                     e.test_loss, e.test_acc}) {
      w.F64(v);
    }
  }
  w.U64(m.weights.size());
  for (const NamedTensor& t : m.weights) {
    w.Str(t.name);
    w.U64(t.is_int64);
    w.U64(t.value.shape().size());
    for (int64_t d : t.value.shape()) w.I64(d);
    w.Floats(t.value.data(), t.value.size());
  }
  w.Str(m.weights_sha256);
  w.I64(m.param_count);
  w.Str(m.fingerprint_json);
  w.I64(m.threads);
}

bool GetModel(ByteReader& r, ModelRecord& m) {
  m.profile = r.Str();
  m.profile_json = r.Str();
  m.external = r.U64() != 0;
  m.status = r.Str();
  for (double* v : {&m.train_acc, &m.test_acc, &m.train_loss, &m.test_loss,
                    &m.wall_time_s}) {
    *v = r.F64();
  }
  const uint64_t n_curves = r.U64();
  if (!r.ok() || n_curves > (1u << 24)) return false;
  m.curves.resize(n_curves);
  for (EpochMetrics& e : m.curves) {
    e.epoch = static_cast<int>(r.I64());
    for (double* v : {&e.train_loss_mean, &e.train_loss_last, &e.train_acc,
                      &e.test_loss, &e.test_acc}) {
      *v = r.F64();
    }
  }
  const uint64_t n_weights = r.U64();
  if (!r.ok() || n_weights > (1u << 24)) return false;
  m.weights.resize(n_weights);
  for (NamedTensor& t : m.weights) {
    t.name = r.Str();
    t.is_int64 = r.U64() != 0;
    const uint64_t rank = r.U64();
    if (!r.ok() || rank > 16) return false;
    Shape shape(rank);
    int64_t size = 1;
    for (int64_t& d : shape) {
      d = r.I64();
      if (d < 0 || d > (int64_t{1} << 40)) return false;
      size *= d;
      if (size > (int64_t{1} << 40)) return false;
    }
    if (static_cast<uint64_t>(size) * sizeof(float) > r.remaining())
      return false;
    t.value = Tensor(shape);
    r.Floats(t.value.data(), t.value.size());
  }
  m.weights_sha256 = r.Str();
  m.param_count = r.I64();
  m.fingerprint_json = r.Str();
  m.threads = static_cast<int>(r.I64());
  return r.ok();
}

}  // namespace

std::string EncodeHistory(const std::vector<HistoryEntry>& h) {
  ByteWriter w;
  w.U64(h.size());
  for (const HistoryEntry& e : h) {
    w.I64(e.id);
    w.I64(e.subspace);
    w.U64(e.x.size());
    for (double v : e.x) w.F64(v);
    w.Str(e.status);
    w.F64(e.objective);
    w.I64(e.pending_ref);
    w.Str(e.optimizer_state);
  }
  return std::move(w.bytes());
}

Result<std::vector<HistoryEntry>> DecodeHistory(const std::string& bytes) {
  ByteReader r(bytes);
  const uint64_t n = r.U64();
  if (!r.ok() || n > bytes.size()) return Truncated("history");
  std::vector<HistoryEntry> h(n);
  for (HistoryEntry& e : h) {
    e.id = r.I64();
    e.subspace = static_cast<int>(r.I64());
    const uint64_t d = r.U64();
    if (!r.ok() || d > 64) return Truncated("history");
    e.x.resize(d);
    for (double& v : e.x) v = r.F64();
    e.status = r.Str();
    e.objective = r.F64();
    e.pending_ref = r.I64();
    e.optimizer_state = r.Str();
  }
  if (!r.ok() || !r.at_end()) return Truncated("history");
  return h;
}

std::string EncodeTrialRecord(const TrialRecord& t) {
  ByteWriter w;
  for (const std::string* s : {&t.arch, &t.data_spec, &t.hparams_json,
                               &t.provenance, &t.external_id, &t.extra_json}) {
    w.Str(*s);
  }
  for (double v :
       {t.lr, t.adam_eps, t.beta1, t.beta2, t.weight_decay, t.divergence})
    w.F64(v);
  w.I64(t.batch_size);
  w.I64(t.epochs);
  w.U64(t.seed.has_value());  // presence flag, then the value (0 if absent)
  w.I64(t.seed.value_or(0));
  w.U64(t.search_id.has_value());
  w.I64(t.search_id.value_or(0));
  w.U64(t.models.size());
  for (const ModelRecord& m : t.models) PutModel(w, m);
  return std::move(w.bytes());
}

Result<TrialRecord> DecodeTrialRecord(const std::string& bytes) {
  ByteReader r(bytes);
  TrialRecord t;
  for (std::string* s : {&t.arch, &t.data_spec, &t.hparams_json, &t.provenance,
                         &t.external_id, &t.extra_json}) {
    *s = r.Str();
  }
  for (double* v : {&t.lr, &t.adam_eps, &t.beta1, &t.beta2, &t.weight_decay,
                    &t.divergence}) {
    *v = r.F64();
  }
  t.batch_size = r.I64();
  t.epochs = r.I64();
  const bool has_seed = r.U64() != 0;
  const int64_t seed = r.I64();
  if (has_seed) t.seed = seed;
  const bool has_search = r.U64() != 0;
  const int64_t search_id = r.I64();
  if (has_search) t.search_id = search_id;
  const uint64_t n = r.U64();
  if (!r.ok() || n > 1024) return Truncated("trial record");
  t.models.resize(n);
  for (ModelRecord& m : t.models) {
    if (!GetModel(r, m)) return Truncated("trial record");
  }
  if (!r.ok() || !r.at_end()) return Truncated("trial record");
  return t;
}

}  // namespace xw::hpo::internal
