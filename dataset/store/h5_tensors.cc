// Tensor datasets and the "tensor_order" attribute of a group (the
// weights-file layout, tensor_file.h), on top of the HDF5 adapter.
#include <string>
#include <vector>

#include "h5_adapter.h"

namespace xw::h5 {

namespace {

Status ValidateName(const std::string& name, const std::string& what) {
  if (name.empty() || name == "." || name.find('/') != std::string::npos) {
    return Status::InvalidArgument(
        what + ": invalid tensor name '" + name +
        "' (must be non-empty, not '.', without '/')");
  }
  return Status::OK();
}

Result<NamedTensor> ReadOneTensor(hid_t loc, const std::string& name,
                                  const std::string& what) {
  if (!Exists(loc, name)) {
    return Status::Corruption(what + ": tensor '" + name +
                              "' is listed but missing");
  }
  Handle ds = Dataset(H5Dopen2(loc, name.c_str(), H5P_DEFAULT));
  if (!ds.valid())
    return Corrupt(what + ": cannot open dataset '" + name + "'");
  Handle ftype = Type(H5Dget_type(ds.get()));
  H5T_class_t cls = H5Tget_class(ftype.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
    return Status::NotSupported(what + ": dataset '" + name +
                                "' is not numeric");
  }
  Handle space = Space(H5Dget_space(ds.get()));
  H5S_class_t sclass = H5Sget_simple_extent_type(space.get());
  if (sclass == H5S_NULL || sclass == H5S_NO_CLASS) {
    return Status::NotSupported(what + ": dataset '" + name +
                                "' has an empty dataspace");
  }
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) return Corrupt(what + ": bad dataspace of '" + name + "'");
  std::vector<hsize_t> dims(rank);
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  Shape shape(dims.begin(), dims.end());
  NamedTensor t{name, Tensor(shape), cls == H5T_INTEGER};
  if (t.value.size() == 0) return t;
  herr_t rc;
  if (t.is_int64) {
    std::vector<int64_t> buf(t.value.size());
    rc = H5Dread(ds.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                 buf.data());
    for (size_t i = 0; i < buf.size(); ++i)
      t.value[i] = static_cast<float>(buf[i]);
  } else {
    rc = H5Dread(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                 t.value.data());
  }
  if (rc < 0)
    return Corrupt(what + ": cannot read dataset '" + name +
                   "' (truncated file?)");
  return t;
}

}  // namespace

Status WriteTensors(hid_t loc, const NamedTensors& tensors,
                    const std::string& what) {
  std::vector<const char*> names;
  for (const NamedTensor& t : tensors) {
    XW_RETURN_IF_ERROR(ValidateName(t.name, what));
    if (t.name == "curves") {
      return Status::InvalidArgument(what +
                                     ": tensor name 'curves' is reserved");
    }
    Handle space = Space(t.value.rank() == 0 ? H5Screate(H5S_SCALAR) : [&] {
      std::vector<hsize_t> dims(t.value.shape().begin(), t.value.shape().end());
      return H5Screate_simple(static_cast<int>(dims.size()), dims.data(),
                              nullptr);
    }());
    hid_t ftype = t.is_int64 ? H5T_STD_I64LE : H5T_IEEE_F32LE;
    Handle ds = Dataset(H5Dcreate2(loc, t.name.c_str(), ftype, space.get(),
                                   H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!ds.valid()) {
      if (Exists(loc, t.name))
        return Status::InvalidArgument(what + ": duplicate tensor name '" +
                                       t.name + "'");
      return Fail(what + ": cannot create dataset '" + t.name + "'");
    }
    herr_t rc = 0;
    if (t.value.size() > 0 && t.is_int64) {
      std::vector<int64_t> buf(t.value.size());
      for (size_t i = 0; i < buf.size(); ++i)
        buf[i] = static_cast<int64_t>(t.value[i]);
      rc = H5Dwrite(ds.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                    buf.data());
    } else if (t.value.size() > 0) {
      rc = H5Dwrite(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                    t.value.data());
    }
    if (rc < 0) return Fail(what + ": cannot write dataset '" + t.name + "'");
    names.push_back(t.name.c_str());
  }
  hsize_t n = names.size();
  Handle space =
      Space(n == 0 ? H5Screate(H5S_NULL) : H5Screate_simple(1, &n, nullptr));
  Handle type = VarStringType();
  Handle attr = Attr(H5Acreate2(loc, "tensor_order", type.get(), space.get(),
                                H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid())
    return Fail(what + ": cannot create attribute 'tensor_order'");
  if (n > 0 && H5Awrite(attr.get(), type.get(), names.data()) < 0) {
    return Fail(what + ": cannot write attribute 'tensor_order'");
  }
  return Status::OK();
}

Result<NamedTensors> ReadTensors(hid_t loc, const std::string& what) {
  std::vector<std::string> names;
  if (H5Aexists(loc, "tensor_order") > 0) {
    Handle attr = Attr(H5Aopen(loc, "tensor_order", H5P_DEFAULT));
    if (!attr.valid())
      return Corrupt(what + ": cannot open attribute 'tensor_order'");
    XW_ASSIGN_OR_RETURN(names,
                        ReadStringList(attr.get(), what + ": tensor_order"));
  } else {
    // A file written by someone else (e.g. h5py from a state_dict).
    auto collect = [](hid_t g, const char* name, const H5L_info_t*,
                      void* out) -> herr_t {
      hid_t obj = H5Oopen(g, name, H5P_DEFAULT);
      if (obj < 0) return -1;
      bool is_ds = H5Iget_type(obj) == H5I_DATASET;
      H5Oclose(obj);
      if (is_ds) static_cast<std::vector<std::string>*>(out)->push_back(name);
      return 0;
    };
    if (H5Literate(loc, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names) <
        0) {
      return Corrupt(what + ": cannot list datasets");
    }
  }
  NamedTensors out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    XW_ASSIGN_OR_RETURN(NamedTensor t, ReadOneTensor(loc, name, what));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace xw::h5
