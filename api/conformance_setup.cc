// The reference frameworks' runners as subprocesses, and the digits data.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "conformance_internal.h"

extern char** environ;

namespace xw::conformance {

namespace fs = std::filesystem;

const std::vector<Framework>& Frameworks() {
  static const std::vector<Framework> kFrameworks = {
      {"tfjs", {"simple_cnn", "resnet20", "vgg11"}},
      {"pytorch", {"mlp", "simple_cnn", "resnet20", "vgg11"}},
  };
  return kFrameworks;
}

// Widths keep TF.js's pure-JS steps to seconds: mlp 64 hidden units,
// simple_cnn 8/16/32, resnet20 4/8/16 channels, vgg11 8..64 channels and a
// 512-unit classifier.
double ArchWidth(const std::string& arch) {
  if (arch == "mlp" || arch == "vgg11") return 0.125;
  return 0.25;
}

Result<int> RunProcess(const std::vector<std::string>& argv, const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return Status::NotFound("cannot run '" + argv[0] + "': " + std::strerror(rc));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Status::Internal("waitpid failed for '" + argv[0] + "'");
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string LogTail(const std::string& path, size_t max_bytes) {
  std::ifstream f(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (text.size() > max_bytes) text = "..." + text.substr(text.size() - max_bytes);
  return text;
}

std::string MissingFramework(const std::string& framework, const ConformanceOptions& o,
                             const std::string& work_dir) {
  const std::string log = work_dir + "/probe-" + framework + ".log";
  if (framework == "tfjs") {
    const fs::path pkg =
        fs::path(o.source_dir) / "tests/conformance/node_modules/@tensorflow/tfjs/package.json";
    auto node = RunProcess({o.node, "--version"}, log);
    if (!node.ok() || *node != 0) {
      return "Node.js ('" + o.node + "') is not installed: run `bash scripts/setup.sh` "
             "(Debian's nodejs and npm, then TensorFlow.js)";
    }
    if (!fs::exists(pkg)) {
      return "TensorFlow.js is not installed in " + o.source_dir +
             "/tests/conformance: run `bash scripts/setup.sh`, or `npm ci --prefix "
             "tests/conformance` from the source tree";
    }
    return "";
  }
  auto torch = RunProcess({o.python, "-c", "import torch, numpy"}, log);
  if (!torch.ok() || *torch != 0) {
    return "PyTorch is not installed for " + o.python +
           ": run `bash scripts/setup.sh` (Debian's python3-torch)";
  }
  return "";
}

Result<DataSplits> DigitsData(const ConformanceOptions& o, const std::string& work_dir,
                              int size) {
  const std::string dir = work_dir + "/digits" + std::to_string(size);
  if (!fs::exists(dir + "/t10k-labels-idx1-ubyte")) {
    const std::string script = o.source_dir + "/scripts/make_digits.py";
    const std::string log = work_dir + "/make_digits.log";
    XW_ASSIGN_OR_RETURN(int rc, RunProcess({o.python, script, dir, "--size", std::to_string(size)},
                                           log));
    if (rc != 0) {
      return Status::FailedPrecondition("cannot make the digits data (" + script +
                                        ", needs python3-sklearn: bash scripts/setup.sh): " +
                                        LogTail(log));
    }
  }
  return LoadDataSpec("mnist:" + dir, DataOptions{});
}

std::vector<std::string> RunnerCommand(const std::string& framework,
                                       const ConformanceOptions& o, const std::string& in_dir,
                                       const std::string& out_dir) {
  const std::string dir = o.source_dir + "/tests/conformance/";
  if (framework == "tfjs") return {o.node, dir + "tfjs_steps.js", in_dir, out_dir};
  return {o.python, dir + "torch_steps.py", in_dir, out_dir};
}

}  // namespace xw::conformance
