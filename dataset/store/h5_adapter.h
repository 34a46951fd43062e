// Internal HDF5 adapter of the dataset module: RAII handles, the process-wide
// HDF5 lock, atomic file creation, and group-level tensor / series / string
// attribute I/O. Nothing here is part of the public API; HDF5 headers stay in
// the dataset/ directory.
//
// Debian's HDF5 is the serial (non-thread-safe) build, so every function that
// touches HDF5 must be called with H5Guard held; the public entry points take
// it.
#ifndef XWIRES_DATASET_STORE_H5_ADAPTER_H_
#define XWIRES_DATASET_STORE_H5_ADAPTER_H_

#include <hdf5.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw::h5 {

// Serialises HDF5 calls within the process and disables HDF5's automatic
// error-stack printing (errors become Status values instead).
std::unique_lock<std::recursive_mutex> H5Guard();

// Owns one HDF5 identifier and closes it with the matching H5*close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { Reset(); }
  void Reset();
  // Gives up ownership without closing.
  hid_t Release() {
    hid_t id = id_;
    id_ = -1;
    return id;
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

inline Handle File(hid_t id) { return Handle(id, H5Fclose); }
inline Handle Group(hid_t id) { return Handle(id, H5Gclose); }
inline Handle Dataset(hid_t id) { return Handle(id, H5Dclose); }
inline Handle Space(hid_t id) { return Handle(id, H5Sclose); }
inline Handle Type(hid_t id) { return Handle(id, H5Tclose); }
inline Handle Attr(hid_t id) { return Handle(id, H5Aclose); }
inline Handle Plist(hid_t id) { return Handle(id, H5Pclose); }

// `otherwise`, unless the system cannot read `path` (EIO from a failing
// disk): then IOError "<path>: cannot read (<cause>)". Reads the whole file:
// call it only after HDF5 failed on `path`, so that a file the disk cannot
// read is not taken for a damaged one (which fsck --repair would move away).
Status UnreadableOr(const std::string& path, Status otherwise);

// IOError / Corruption "<what> (<HDF5's most specific message>)"; clears
// HDF5's error stack, so call right after the failing HDF5 call.
Status Fail(const std::string& what);
Status Corrupt(const std::string& what);

// A variable-length UTF-8 string type (the layout h5py reads as str).
Handle VarStringType();
// Reads a string attribute (variable or fixed length, scalar or 1-D).
Result<std::vector<std::string>> ReadStringList(hid_t attr,
                                                const std::string& what);

// Removes the temp files "<path>.tmp-<pid>-<n>" that AtomicCreate left
// for `path` in writers that are gone (kill(pid, 0) fails with ESRCH),
// never a live writer's. For files whose name is a function of their
// content's identity, which a resumed writer creates again.
void RemoveDeadWritersTemps(const std::string& path);

// Creates `path` atomically: `fill` writes into a new HDF5 file built in
// memory (about twice the file's size at the peak); its image is written to
// a unique temp name beside `path`, fsync'ed and renamed, and the directory
// fsync'ed. On any failure the temp file is removed and `path` is untouched;
// a failed write (ENOSPC, EIO, EROFS) is one IOError naming `path` and the
// cause, and leaves no HDF5 file open. Call with H5Guard held.
Status AtomicCreate(const std::string& path,
                    const std::function<Status(hid_t file)>& fill);

// Opens an existing file read-only. NotFound if missing, Corruption if it is
// not HDF5 or cannot be opened (e.g. truncated). Call with H5Guard held.
Result<Handle> OpenReadOnly(const std::string& path);

// Writes tensors as datasets of `loc` plus the "tensor_order" attribute on
// `loc`. `what` names the file/group in error messages.
Status WriteTensors(hid_t loc, const NamedTensors& tensors,
                    const std::string& what);
// Reads the tensors of `loc` in "tensor_order" order (alphabetical if absent),
// skipping child groups.
Result<NamedTensors> ReadTensors(hid_t loc, const std::string& what);

// Scalar variable-length UTF-8 string attributes.
Status WriteStringAttr(hid_t loc, const std::string& key,
                       const std::string& value);
// All scalar string attributes of `loc` (other attributes are skipped).
Result<std::map<std::string, std::string>> ReadStringAttrs(
    hid_t loc, const std::string& what);

// 1-D float64 datasets (curves). Reading converts from any float type.
Status WriteSeries(hid_t loc, const std::string& name,
                   const std::vector<double>& v);
Result<std::vector<double>> ReadSeries(hid_t loc, const std::string& name,
                                       const std::string& what);

// Creates a child group (intermediate groups included).
Result<Handle> CreateGroup(hid_t loc, const std::string& name);
// Opens a child group; NotFound naming `what` if absent.
Result<Handle> OpenGroup(hid_t loc, const std::string& name,
                         const std::string& what);
bool Exists(hid_t loc, const std::string& name);

}  // namespace xw::h5

#endif  // XWIRES_DATASET_STORE_H5_ADAPTER_H_
