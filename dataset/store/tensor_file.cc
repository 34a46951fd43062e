#include "xwires/dataset/store/tensor_file.h"

#include <openssl/evp.h>

#include <bit>
#include <cstdint>
#include <memory>

#include "h5_adapter.h"

namespace xw {

static_assert(std::endian::native == std::endian::little,
              "WeightsSha256 hashes native bytes as little-endian");

namespace {
constexpr const char* kFormat = "xwires-tensors-1";
}  // namespace

Status WriteTensorFile(const std::string& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& string_attrs) {
  for (const auto& [k, v] : string_attrs) {
    if (k == "format" || k == "tensor_order") {
      return Status::InvalidArgument(path + ": attribute name '" + k +
                                     "' is reserved");
    }
  }
  auto lock = h5::H5Guard();
  return h5::AtomicCreate(path, [&](hid_t file) -> Status {
    XW_RETURN_IF_ERROR(h5::WriteTensors(file, tensors, path));
    XW_RETURN_IF_ERROR(h5::WriteStringAttr(file, "format", kFormat));
    for (const auto& [k, v] : string_attrs)
      XW_RETURN_IF_ERROR(h5::WriteStringAttr(file, k, v));
    return Status::OK();
  });
}

Result<NamedTensors> ReadTensorFile(const std::string& path) {
  auto lock = h5::H5Guard();
  XW_ASSIGN_OR_RETURN(h5::Handle file, h5::OpenReadOnly(path));
  return h5::ReadTensors(file.get(), path);
}

Result<std::map<std::string, std::string>> ReadTensorFileAttrs(
    const std::string& path) {
  auto lock = h5::H5Guard();
  XW_ASSIGN_OR_RETURN(h5::Handle file, h5::OpenReadOnly(path));
  return h5::ReadStringAttrs(file.get(), path);
}

std::string WeightsSha256(const NamedTensors& tensors) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                              EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<int64_t> ints;
  for (const NamedTensor& t : tensors) {
    if (t.is_int64) {
      ints.resize(t.value.size());
      for (size_t i = 0; i < ints.size(); ++i)
        ints[i] = static_cast<int64_t>(t.value[i]);
      EVP_DigestUpdate(ctx.get(), ints.data(), ints.size() * sizeof(int64_t));
    } else {
      EVP_DigestUpdate(ctx.get(), t.value.data(),
                       t.value.size() * sizeof(float));
    }
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < len; ++i) {
    hex += kHex[md[i] >> 4];
    hex += kHex[md[i] & 15];
  }
  return hex;
}

}  // namespace xw
