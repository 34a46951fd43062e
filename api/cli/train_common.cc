#include "train_common.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace xw::cli {

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

std::string SafeFileName(const std::string& name) {
  std::string out = name.empty() ? "profile" : name;
  for (char& c : out) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  }
  return out;
}

Status PrepareOutputDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    return Status::InvalidArgument("--out " + dir + ": exists and is not a directory");
  }
  fs::create_directories(dir, ec);
  if (ec) return Status::IOError("--out " + dir + ": cannot create directory: " + ec.message());
  const std::string probe = dir + "/.xwires-probe-" + std::to_string(getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return Status::IOError("--out " + dir + ": directory is not writable");
  ::close(fd);
  ::unlink(probe.c_str());
  return Status::OK();
}

Status WriteFileAtomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return Status::IOError(path + ": cannot create " + tmp);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::IOError(path + ": write failed");
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Status::IOError(path + ": cannot write (fsync or rename failed)");
  }
  return Status::OK();
}

InputSpec InputOfData(const DataSplits& data) {
  InputSpec in;
  in.channels = data.train.channels();
  in.height = data.train.height();
  in.width = data.train.width();
  in.num_classes = data.train.num_classes;
  return in;
}

std::map<std::string, std::string> WeightsAttrs(const std::string& arch,
                                                const ArchOptions& options,
                                                const DataSplits& data, const ModelRecord& m) {
  char width[32], dropout[32];
  std::snprintf(width, sizeof width, "%.17g", options.width);
  std::snprintf(dropout, sizeof dropout, "%.17g", options.dropout);
  return {{"arch", arch},
          {"width", width},
          {"depth", std::to_string(options.depth)},
          {"dropout", dropout},
          {"num_classes", std::to_string(data.train.num_classes)},
          {"input_shape", std::to_string(data.train.channels()) + "," +
                              std::to_string(data.train.height()) + "," +
                              std::to_string(data.train.width())},
          {"profile", m.profile},
          {"status", m.status},
          {"weights_sha256", m.weights_sha256},
          {"data", data.name}};
}

namespace {
std::string Clock(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%02ld:%02ld", s / 60, s % 60);
  }
  return buf;
}
}  // namespace

void ProgressPrinter::Update(const TrainProgress& p) {
  if (quiet_) return;
  if (p.epoch_end) {
    const EpochMetrics& m = p.metrics;
    std::fprintf(stderr,
                 "%s%s epoch %lld/%lld: train loss %.4f (last %.4f) acc %.4f | test loss %.4f "
                 "acc %.4f | %.0f img/s\n",
                 bar_open_ ? "\r\033[K" : "", p.profile.c_str(),
                 static_cast<long long>(p.epoch), static_cast<long long>(p.epochs),
                 m.train_loss_mean, m.train_loss_last, m.train_acc, m.test_loss, m.test_acc,
                 p.images_per_s);
    bar_open_ = false;
    return;
  }
  if (!terminal_) return;
  const auto now = std::chrono::steady_clock::now();
  if (bar_open_ && now - last_draw_ < std::chrono::milliseconds(200) && p.batch != p.batches) {
    return;
  }
  last_draw_ = now;
  constexpr int kBar = 24;
  const int filled = static_cast<int>(kBar * p.batch / std::max<int64_t>(p.batches, 1));
  std::string bar(filled, '#');
  bar.append(kBar - filled, '.');
  std::fprintf(stderr, "\r\033[K%s epoch %lld/%lld [%s] batch %lld/%lld  %.0f img/s  ETA %s  loss %.4f",
               p.profile.c_str(), static_cast<long long>(p.epoch),
               static_cast<long long>(p.epochs), bar.c_str(), static_cast<long long>(p.batch),
               static_cast<long long>(p.batches), p.images_per_s, Clock(p.eta_s).c_str(), p.loss);
  std::fflush(stderr);
  bar_open_ = true;
}

void ProgressPrinter::Finish() {
  if (bar_open_) std::fprintf(stderr, "\n");
  bar_open_ = false;
}

}  // namespace xw::cli
