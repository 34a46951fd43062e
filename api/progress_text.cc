#include "xwires/api/progress_text.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace xw {
namespace {

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < static_cast<int>(sizeof buf)) return std::string(buf, std::max(n, 0));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  va_end(ap);
  big.pop_back();
  return big;
}

// "mm:ss" or "h:mm:ss" of a training ETA; "--:--" when unknown.
std::string Clock(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long s = std::lround(seconds);
  if (s >= 3600) return Format("%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return Format("%02ld:%02ld", s / 60, s % 60);
}

}  // namespace

void WriteToStderr(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

std::string DurationText(double s) {
  if (!(s >= 0)) return "?";
  const long long t = std::llround(s);
  if (t >= 3600) return Format("%lldh%02lldm", t / 3600, t / 60 % 60);
  if (t >= 60) return Format("%lldm%02llds", t / 60, t % 60);
  return Format("%llds", t);
}

void TrainProgressText::Update(const TrainProgress& p) {
  if (quiet_) return;
  if (p.epoch_end) {
    const EpochMetrics& m = p.metrics;
    write_(Format("%s%s epoch %lld/%lld: train loss %.4f (last %.4f) acc %.4f | test loss %.4f "
                  "acc %.4f | %.0f img/s\n",
                  bar_open_ ? "\r\033[K" : "", p.profile.c_str(), static_cast<long long>(p.epoch),
                  static_cast<long long>(p.epochs), m.train_loss_mean, m.train_loss_last,
                  m.train_acc, m.test_loss, m.test_acc, p.images_per_s));
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
  write_(Format("\r\033[K%s epoch %lld/%lld [%s] batch %lld/%lld  %.0f img/s  ETA %s  loss %.4f",
                p.profile.c_str(), static_cast<long long>(p.epoch),
                static_cast<long long>(p.epochs), bar.c_str(), static_cast<long long>(p.batch),
                static_cast<long long>(p.batches), p.images_per_s, Clock(p.eta_s).c_str(),
                p.loss));
  bar_open_ = true;
}

void TrainProgressText::Finish() {
  if (bar_open_) write_("\n");
  bar_open_ = false;
}

void SearchProgressText::Message(const std::string& m) {
  if (quiet_) return;
  write_(m + "\n");
}

void SearchProgressText::Update(const hpo::SearchProgress& p) {
  if (quiet_ || (p.trial_id == 0 && !terminal_)) return;
  const int64_t ended = p.finished + p.failed;
  std::string tail;
  if (p.best >= 0) {
    tail = Format("best %.4f (trial %lld), %lld running, %s elapsed, ETA %s", p.best,
                  static_cast<long long>(p.best_trial), static_cast<long long>(p.running),
                  DurationText(p.elapsed_s).c_str(), DurationText(p.eta_s).c_str());
  } else {
    tail = Format("%lld running, %s elapsed", static_cast<long long>(p.running),
                  DurationText(p.elapsed_s).c_str());
  }
  const std::string trial =
      Format("trial %lld (subspace %d): ", static_cast<long long>(p.trial_id), p.subspace);
  if (!terminal_) {
    write_(Format("[%lld/%lld] %s%s | %s\n", static_cast<long long>(ended),
                  static_cast<long long>(p.planned), trial.c_str(), p.trial_text.c_str(),
                  tail.c_str()));
    return;
  }
  // A finished trial's line scrolls up; the bar stays on the last line.
  constexpr int kWidth = 24;
  const int fill =
      p.planned > 0
          ? static_cast<int>(kWidth * std::min<int64_t>(ended, p.planned) / p.planned)
          : 0;
  std::string bar(fill, '#');
  bar.resize(kWidth, '-');
  const std::string line = p.trial_id == 0 ? "" : trial + p.trial_text + "\n";
  write_(Format("\r\033[K%s[%s] %lld/%lld trials | %s", line.c_str(), bar.c_str(),
                static_cast<long long>(ended), static_cast<long long>(p.planned), tail.c_str()));
  bar_open_ = true;
}

void SearchProgressText::Finish() {
  if (bar_open_) write_("\n");
  bar_open_ = false;
}

}  // namespace xw
