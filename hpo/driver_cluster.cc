// Cluster implementations: one local rank, or MPI (C API).
//
// Waiting is done by polling with short sleeps (MPI_Iprobe / MPI_Test)
// rather than in blocking MPI calls, because Open MPI's blocking calls spin
// a core, and the cores belong to the trainings running on the same node.
// The MPI C API only: keep Open MPI / MPICH from pulling in their deprecated
// C++ bindings (which need the C++ MPI library).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "xwires/hpo/search_driver.h"

namespace xw::hpo {
namespace {

class Local final : public Cluster {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_size() const override { return 1; }
  void Broadcast(std::string*) override {}
  void Send(int, int, const std::string&) override {
    std::abort();
  }  // no peer exists
  std::string Recv(int, int) override { std::abort(); }
  bool TryRecv(int*, int*, std::string*) override { return false; }
  void Barrier() override {}
  [[noreturn]] void Abort(int code) override { std::_Exit(code); }
};

void Nap() { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }

class Mpi final : public Cluster {
 public:
  Mpi() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_,
                        MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
  }
  ~Mpi() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }

  void Broadcast(std::string* bytes) override {
    unsigned long long n = bytes->size();
    Wait([&](MPI_Request* r) {
      MPI_Ibcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD, r);
    });
    bytes->resize(n);
    // Chunks below 2^30 bytes keep the int count of MPI-3 in range.
    for (size_t off = 0; off < n; off += kChunk) {
      const int len = static_cast<int>(std::min<size_t>(kChunk, n - off));
      Wait([&](MPI_Request* r) {
        MPI_Ibcast(bytes->data() + off, len, MPI_BYTE, 0, MPI_COMM_WORLD, r);
      });
    }
  }

  void Send(int dest, int tag, const std::string& bytes) override {
    if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
      std::fprintf(stderr,
                   "xwires: error: search message of %zu bytes is too large\n",
                   bytes.size());
      Abort(1);
    }
    Wait([&](MPI_Request* r) {
      MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest,
                tag, MPI_COMM_WORLD, r);
    });
  }

  std::string Recv(int source, int tag) override {
    MPI_Status st;
    int flag = 0;
    for (;;) {
      MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, &st);
      if (flag) break;
      Nap();
    }
    return Take(st);
  }

  bool TryRecv(int* source, int* tag, std::string* bytes) override {
    MPI_Status st;
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return false;
    *source = st.MPI_SOURCE;
    *tag = st.MPI_TAG;
    *bytes = Take(st);
    return true;
  }

  void Barrier() override {
    Wait([&](MPI_Request* r) { MPI_Ibarrier(MPI_COMM_WORLD, r); });
  }

  [[noreturn]] void Abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 30;

  template <typename Start>
  void Wait(Start start) {
    MPI_Request req;
    start(&req);
    int done = 0;
    for (;;) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return;
      Nap();
    }
  }

  std::string Take(MPI_Status& st) {
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    std::string bytes(static_cast<size_t>(n), '\0');
    MPI_Recv(bytes.data(), n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG,
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return bytes;
  }

  int rank_ = 0, size_ = 1, local_size_ = 1;
};

}  // namespace

std::unique_ptr<Cluster> LocalCluster() { return std::make_unique<Local>(); }

Result<std::unique_ptr<Cluster>> StartMpiCluster(int* argc, char*** argv) {
  const char* off = std::getenv("XWIRES_NO_MPI");
  if (off != nullptr && off[0] != '\0' && std::strcmp(off, "0") != 0)
    return LocalCluster();
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return Status::Internal("MPI is already initialised");
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS) {
    return Status::Internal(
        "MPI_Init_thread failed (set XWIRES_NO_MPI=1 to run without MPI)");
  }
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    return Status::Internal(
        "the MPI library does not support MPI_THREAD_FUNNELED");
  }
  return std::unique_ptr<Cluster>(std::make_unique<Mpi>());
}

}  // namespace xw::hpo
