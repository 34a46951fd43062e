#include "model_file.h"

#include <openssl/rand.h>

#include <cstdio>
#include <random>

#include "h5_adapter.h"

namespace xw {

namespace {

constexpr const char* kCurveNames[] = {"epoch",           "train_loss_mean",
                                       "train_loss_last", "train_acc",
                                       "test_loss",       "test_acc"};

Status WriteCurves(hid_t group, const std::vector<EpochMetrics>& c) {
  XW_ASSIGN_OR_RETURN(h5::Handle g, h5::CreateGroup(group, "curves"));
  std::vector<std::vector<double>> cols(6, std::vector<double>(c.size()));
  for (size_t i = 0; i < c.size(); ++i) {
    cols[0][i] = c[i].epoch;
    cols[1][i] = c[i].train_loss_mean;
    cols[2][i] = c[i].train_loss_last;
    cols[3][i] = c[i].train_acc;
    cols[4][i] = c[i].test_loss;
    cols[5][i] = c[i].test_acc;
  }
  for (int k = 0; k < 6; ++k)
    XW_RETURN_IF_ERROR(h5::WriteSeries(g.get(), kCurveNames[k], cols[k]));
  return Status::OK();
}

}  // namespace

Status WriteBundle(const std::string& path,
                   const std::vector<BundleModel>& models) {
  auto lock = h5::H5Guard();
  return h5::AtomicCreate(path, [&](hid_t file) -> Status {
    XW_RETURN_IF_ERROR(h5::WriteStringAttr(file, "format", "xwires-bundle-1"));
    for (const BundleModel& m : models) {
      std::string what = path + ":" + m.group;
      XW_ASSIGN_OR_RETURN(h5::Handle g, h5::CreateGroup(file, m.group));
      static const NamedTensors kNone;
      XW_RETURN_IF_ERROR(
          h5::WriteTensors(g.get(), m.weights ? *m.weights : kNone, what));
      for (const auto& [k, v] : m.attrs)
        XW_RETURN_IF_ERROR(h5::WriteStringAttr(g.get(), k, v));
      if (m.curves) XW_RETURN_IF_ERROR(WriteCurves(g.get(), *m.curves));
    }
    return Status::OK();
  });
}

Result<NamedTensors> ReadBundleWeights(const std::string& path,
                                       const std::string& group) {
  auto lock = h5::H5Guard();
  XW_ASSIGN_OR_RETURN(h5::Handle file, h5::OpenReadOnly(path));
  XW_ASSIGN_OR_RETURN(h5::Handle g, h5::OpenGroup(file.get(), group, path));
  return h5::ReadTensors(g.get(), path + ":" + group);
}

Result<std::vector<EpochMetrics>> ReadBundleCurves(const std::string& path,
                                                   const std::string& group) {
  auto lock = h5::H5Guard();
  std::string what = path + ":" + group + "/curves";
  XW_ASSIGN_OR_RETURN(h5::Handle file, h5::OpenReadOnly(path));
  XW_ASSIGN_OR_RETURN(h5::Handle g, h5::OpenGroup(file.get(), group, path));
  std::vector<EpochMetrics> out;
  if (!h5::Exists(g.get(), "curves")) return out;
  XW_ASSIGN_OR_RETURN(h5::Handle c, h5::OpenGroup(g.get(), "curves", what));
  std::vector<std::vector<double>> cols;
  for (const char* name : kCurveNames) {
    XW_ASSIGN_OR_RETURN(auto v, h5::ReadSeries(c.get(), name, what));
    if (!cols.empty() && v.size() != cols[0].size()) {
      return Status::Corruption(what + ": curve '" + name +
                                "' has a different length");
    }
    cols.push_back(std::move(v));
  }
  out.resize(cols[0].size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = {static_cast<int>(cols[0][i]),
              cols[1][i],
              cols[2][i],
              cols[3][i],
              cols[4][i],
              cols[5][i]};
  }
  return out;
}

std::string NewBundleName() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    std::random_device
        rd;  // OpenSSL's generator failed: fall back to the OS one
    for (auto& b : bytes) b = static_cast<unsigned char>(rd());
  }
  char hex[33];
  for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
  return std::string("h5/") + std::string(hex, 2) + "/" + hex + ".h5";
}

}  // namespace xw
