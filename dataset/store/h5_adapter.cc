#include "h5_adapter.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "h5_image.h"

namespace xw::h5 {

namespace {

Status FsyncPath(const std::string& path, bool directory) {
  int fd =
      ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0)
    return Status::IOError(path +
                           ": cannot open for fsync: " + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0)
    return Status::IOError(path + ": fsync failed: " + std::strerror(err));
  return Status::OK();
}

// The most specific message of HDF5's current error stack ("" if empty). HDF5
// keeps the stack until the next API call, so call right after a failure.
std::string LastError() {
  std::string msg;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        auto* s = static_cast<std::string*>(out);
        if (n == 0 && e->desc) *s = e->desc;
        return 0;
      },
      &msg);
  H5Eclear2(H5E_DEFAULT);
  return msg.empty() ? "" : " (" + msg + ")";
}

}  // namespace

Status UnreadableOr(const std::string& path, Status otherwise) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  int err = fd < 0 ? errno : 0;
  std::vector<char> buf(size_t{1} << 16);
  while (err == 0) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n <= 0) break;
  }
  if (fd >= 0) ::close(fd);
  if (err != 0) return Status::IOError(path + ": cannot read (" + std::strerror(err) + ")");
  return otherwise;
}

Status Fail(const std::string& what) {
  return Status::IOError(what + LastError());
}
Status Corrupt(const std::string& what) {
  return Status::Corruption(what + LastError());
}

Handle VarStringType() {
  Handle t = Type(H5Tcopy(H5T_C_S1));
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

Result<std::vector<std::string>> ReadStringList(hid_t attr,
                                                const std::string& what) {
  Handle ftype = Type(H5Aget_type(attr));
  if (H5Tget_class(ftype.get()) != H5T_STRING) {
    return Status::Corruption(what +
                              ": string attribute has a non-string type");
  }
  Handle space = Space(H5Aget_space(attr));
  hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) return Corrupt(what + ": unreadable attribute dataspace");
  if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) n = 0;
  std::vector<std::string> out;
  if (n == 0) return out;
  if (H5Tis_variable_str(ftype.get()) > 0) {
    Handle mtype = VarStringType();
    std::vector<char*> buf(n, nullptr);
    if (H5Aread(attr, mtype.get(), buf.data()) < 0)
      return Corrupt(what + ": cannot read attribute");
    for (char* s : buf) out.emplace_back(s ? s : "");
    H5Dvlen_reclaim(mtype.get(), space.get(), H5P_DEFAULT, buf.data());
  } else {
    size_t sz = H5Tget_size(ftype.get());
    Handle mtype = Type(H5Tcopy(H5T_C_S1));
    H5Tset_size(mtype.get(), sz);
    std::vector<char> buf(sz * n);
    if (H5Aread(attr, mtype.get(), buf.data()) < 0)
      return Corrupt(what + ": cannot read attribute");
    for (hssize_t i = 0; i < n; ++i) {
      const char* p = buf.data() + i * sz;
      out.emplace_back(p, strnlen(p, sz));
    }
  }
  return out;
}

std::unique_lock<std::recursive_mutex> H5Guard() {
  static std::recursive_mutex mu;
  std::unique_lock<std::recursive_mutex> lock(mu);
  static bool silenced = false;
  if (!silenced) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    silenced = true;
  }
  return lock;
}

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    Reset();
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = -1;
  }
  return *this;
}

void Handle::Reset() {
  if (id_ >= 0 && closer_) closer_(id_);
  id_ = -1;
}

void RemoveDeadWritersTemps(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  const std::string prefix = target.filename().string() + ".tmp-";
  for (const auto& e : fs::directory_iterator(target.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      fs::remove(e.path(), ec);
    }
  }
}

namespace {

// Writes `bytes` to a new file `tmp` and fsyncs it; errors name `path` (the
// file being created) and the system's cause (a full disk, EIO, a
// read-only file system).
Status WriteNewFile(const std::string& tmp, const std::string& path,
                    const std::vector<char>& bytes) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IOError(path + ": cannot create (" + std::strerror(errno) +
                           ")");
  }
  size_t done = 0;
  int err = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    return Status::IOError(path + ": cannot write " +
                           std::to_string(bytes.size()) + " bytes (" +
                           std::strerror(err) + "); nothing was stored");
  }
  return Status::OK();
}

}  // namespace

Status AtomicCreate(const std::string& path,
                    const std::function<Status(hid_t file)>& fill) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" +
                          std::to_string(counter++);
  auto cleanup = [&](Status s) {
    std::remove(tmp.c_str());
    return s;
  };
  // HDF5 builds the file in memory (the core driver, no backing store) and
  // we write its image: HDF5 itself never meets a full disk or an I/O error,
  // whose raw error stacks and half-closed files (crashing HDF5's own
  // shutdown at exit) are what its file drivers leave behind; ours is one
  // message naming the file and the cause.
  std::vector<char> image;
  {
    // Format 1.8 lets large attribute lists ("tensor_order" of big models)
    // use dense storage; every HDF5 >= 1.8 (and h5py) reads it.
    Handle fapl = Plist(H5Pcreate(H5P_FILE_ACCESS));
    H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18);
    // Closing the file closes every object still open in it.
    H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG);
    H5Pset_fapl_core(fapl.get(), size_t{1} << 20, /*backing_store=*/0);
    Handle file =
        File(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
    if (!file.valid()) return Fail(path + ": cannot create HDF5 file in memory");
    XW_RETURN_IF_ERROR(fill(file.get()));
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0)
      return Fail(path + ": flush failed");
    const ssize_t size = H5Fget_file_image(file.get(), nullptr, 0);
    if (size <= 0) return Fail(path + ": cannot get the file image");
    image.resize(static_cast<size_t>(size));
    if (H5Fget_file_image(file.get(), image.data(), image.size()) != size ||
        !SealImageSuperblock(image))
      return Fail(path + ": cannot get the file image");
    if (H5Fclose(file.Release()) < 0) return Fail(path + ": close failed");
  }
  Status s = WriteNewFile(tmp, path, image);
  if (!s.ok()) return cleanup(s);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return cleanup(Status::IOError(
        path + ": rename from temp file failed: " + std::strerror(errno)));
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  return FsyncPath(dir.empty() ? "." : dir, true);
}

Result<Handle> OpenReadOnly(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return Status::NotFound(path + ": no such file");
  if (!S_ISREG(st.st_mode))
    return Status::InvalidArgument(path + ": not a regular file");
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return UnreadableOr(path, Status::Corruption(path + ": not an HDF5 file"));
  }
  Handle f = File(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!f.valid()) {
    Status damaged = Corrupt(path + ": cannot open HDF5 file (truncated or damaged)");
    return UnreadableOr(path, damaged);
  }
  return f;
}

Status WriteStringAttr(hid_t loc, const std::string& key,
                       const std::string& value) {
  Handle space = Space(H5Screate(H5S_SCALAR));
  Handle type = VarStringType();
  Handle attr = Attr(H5Acreate2(loc, key.c_str(), type.get(), space.get(),
                                H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid()) return Fail("cannot create attribute '" + key + "'");
  const char* p = value.c_str();
  if (H5Awrite(attr.get(), type.get(), &p) < 0)
    return Fail("cannot write attribute '" + key + "'");
  return Status::OK();
}

Result<std::map<std::string, std::string>> ReadStringAttrs(
    hid_t loc, const std::string& what) {
  std::vector<std::string> keys;
  auto collect = [](hid_t, const char* name, const H5A_info_t*,
                    void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->push_back(name);
    return 0;
  };
  if (H5Aiterate2(loc, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &keys) <
      0) {
    return Corrupt(what + ": cannot list attributes");
  }
  std::map<std::string, std::string> out;
  for (const std::string& k : keys) {
    Handle attr = Attr(H5Aopen(loc, k.c_str(), H5P_DEFAULT));
    if (!attr.valid())
      return Corrupt(what + ": cannot open attribute '" + k + "'");
    Handle type = Type(H5Aget_type(attr.get()));
    Handle space = Space(H5Aget_space(attr.get()));
    if (H5Tget_class(type.get()) != H5T_STRING ||
        H5Sget_simple_extent_type(space.get()) != H5S_SCALAR) {
      continue;
    }
    XW_ASSIGN_OR_RETURN(
        auto v, ReadStringList(attr.get(), what + ": attribute '" + k + "'"));
    out[k] = v.empty() ? "" : v[0];
  }
  return out;
}

Status WriteSeries(hid_t loc, const std::string& name,
                   const std::vector<double>& v) {
  hsize_t n = v.size();
  Handle space = Space(H5Screate_simple(1, &n, nullptr));
  Handle ds = Dataset(H5Dcreate2(loc, name.c_str(), H5T_IEEE_F64LE, space.get(),
                                 H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!ds.valid()) return Fail("cannot create dataset '" + name + "'");
  if (n > 0 && H5Dwrite(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                        H5P_DEFAULT, v.data()) < 0) {
    return Fail("cannot write dataset '" + name + "'");
  }
  return Status::OK();
}

Result<std::vector<double>> ReadSeries(hid_t loc, const std::string& name,
                                       const std::string& what) {
  if (!Exists(loc, name))
    return Status::Corruption(what + ": missing dataset '" + name + "'");
  Handle ds = Dataset(H5Dopen2(loc, name.c_str(), H5P_DEFAULT));
  if (!ds.valid())
    return Corrupt(what + ": cannot open dataset '" + name + "'");
  Handle space = Space(H5Dget_space(ds.get()));
  if (H5Sget_simple_extent_ndims(space.get()) != 1) {
    return Status::Corruption(what + ": dataset '" + name + "' is not 1-D");
  }
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  std::vector<double> v(n);
  if (n > 0 && H5Dread(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                       H5P_DEFAULT, v.data()) < 0) {
    return Corrupt(what + ": cannot read dataset '" + name +
                   "' (truncated file?)");
  }
  return v;
}

Result<Handle> CreateGroup(hid_t loc, const std::string& name) {
  Handle lcpl = Plist(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Handle g = Group(
      H5Gcreate2(loc, name.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!g.valid()) return Fail("cannot create group '" + name + "'");
  return g;
}

Result<Handle> OpenGroup(hid_t loc, const std::string& name,
                         const std::string& what) {
  if (!Exists(loc, name))
    return Status::NotFound(what + ": no group '" + name + "'");
  Handle g = Group(H5Gopen2(loc, name.c_str(), H5P_DEFAULT));
  if (!g.valid()) return Corrupt(what + ": cannot open group '" + name + "'");
  return g;
}

bool Exists(hid_t loc, const std::string& name) {
  // H5Lexists fails (rather than returning false) when an intermediate group
  // is missing, so walk the path one component at a time.
  size_t pos = 0;
  while (true) {
    size_t next = name.find('/', pos);
    std::string prefix = name.substr(0, next);
    if (H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
    if (next == std::string::npos) return true;
    pos = next + 1;
  }
}

}  // namespace xw::h5
