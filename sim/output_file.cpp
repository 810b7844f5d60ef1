// Output files that are never half-written and never replace what a path points at (sim/output_file.hpp).
#include "sim/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "sim/error.hpp"

namespace gtsim {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void output_error(const std::string& path, const std::string& what, int err) {
  throw InputError(SourcePos{path}, what + ": " + std::strerror(err));
}

// Follows symbolic links to the file they name (dangling ones too: the file they would create),
// then makes the folder part canonical. Throws naming `path` on a loop or an unreadable link.
fs::path resolve_links(const std::string& path) {
  fs::path p(path);
  for (int hops = 0;; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    if (hops == 40) output_error(path, "cannot resolve the output path", ELOOP);
    std::error_code ec;
    fs::path t = fs::read_symlink(p, ec);
    if (ec) output_error(path, "cannot read the symbolic link " + p.string(), ec.value());
    p = t.is_absolute() ? t : p.parent_path() / t;
  }
  std::error_code ec;
  fs::path r = fs::weakly_canonical(p, ec);
  return ec ? p : r;
}

// Writes all of `text` to the open descriptor `fd`; false (errno set) on failure.
bool write_all(int fd, const std::string& text) {
  const char* d = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, d, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    d += n, left -= size_t(n);
  }
  return true;
}

// Removes the temporary file unless the rename happened (every failure path, exceptions included).
struct TempFile {
  std::string path;
  int fd = -1;
  bool keep = false;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!keep && !path.empty()) ::unlink(path.c_str());
  }
};

// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N name a descriptor this process already
// has: it is written as it is (opened again, a regular file would be written from its start, over
// what is there; renamed over, the descriptor would keep the old file). -1 for other paths.
int inherited_fd(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.rfind(prefix, 0) != 0) continue;
    int fd = -1;
    const char* b = path.data() + prefix.size();
    auto [p, ec] = std::from_chars(b, path.data() + path.size(), fd);
    if (ec == std::errc() && p == path.data() + path.size() && p != b) return fd;
  }
  return -1;
}

// What kind of file `path` (links followed) is, or why that cannot be told.
enum class OutKind { kMissing, kRegular, kDirectory, kStream };
OutKind output_kind(const std::string& path, struct stat* st) {
  if (::stat(path.c_str(), st) != 0) {
    if (errno == ENOENT) return OutKind::kMissing;
    output_error(path, "cannot write the output file", errno);
  }
  if (S_ISDIR(st->st_mode)) return OutKind::kDirectory;
  if (S_ISREG(st->st_mode)) return OutKind::kRegular;
  return OutKind::kStream;  // character or block device, FIFO, socket
}

}  // namespace

void check_output_path(const std::string& path) {
  if (path.empty() || path == "-" || inherited_fd(path) >= 0) return;
  struct stat st;
  OutKind kind = output_kind(path, &st);
  if (kind == OutKind::kDirectory) throw InputError(SourcePos{path}, "is a directory, expected a file path");
  if (kind != OutKind::kMissing) return;
  fs::path dir = resolve_links(path).parent_path();
  if (dir.empty()) dir = ".";
  struct stat ds;
  if (::stat(dir.c_str(), &ds) != 0) output_error(path, "cannot write the output file in " + dir.string(), errno);
  if (!S_ISDIR(ds.st_mode)) output_error(path, "cannot write the output file in " + dir.string(), ENOTDIR);
}

void write_output(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    std::cout.flush();
    return;
  }
  if (path.empty()) throw InputError(SourcePos{"<output>"}, "empty output path, expected a file path or '-'");
  if (int fd = inherited_fd(path); fd >= 0) {
    std::cout.flush();
    std::cerr.flush();
    if (::fcntl(fd, F_GETFD) == -1) output_error(path, "cannot write the output", errno);
    if (!write_all(fd, text)) output_error(path, "write failed", errno);
    return;
  }
  struct stat st;
  OutKind kind = output_kind(path, &st);
  if (kind == OutKind::kDirectory) throw InputError(SourcePos{path}, "is a directory, expected a file path");
  if (kind == OutKind::kStream) {
    // /dev/null, /dev/stdout, a pipe: written in place, never replaced.
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) output_error(path, "cannot open the output for writing", errno);
    bool ok = write_all(fd, text);
    int err = errno;
    if (::close(fd) != 0 && ok) ok = false, err = errno;
    if (!ok) output_error(path, "write failed", err);
    return;
  }
  // A regular file, or none yet: written beside the file the path resolves to (through symbolic
  // links), then renamed over it, so a failure never leaves it half-written.
  fs::path target = resolve_links(path);
  fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  TempFile tmp;
  for (int attempt = 0; tmp.fd < 0; ++attempt) {
    std::string name =
        (dir / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()) + "." + std::to_string(attempt)))
            .string();
    tmp.fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (tmp.fd >= 0)
      tmp.path = name;
    else if (errno != EEXIST || attempt == 100)
      output_error(path, "cannot create a temporary file in " + dir.string(), errno);
  }
  if (kind == OutKind::kRegular) ::fchmod(tmp.fd, st.st_mode & 07777);  // keep the file's permissions
  if (!write_all(tmp.fd, text)) output_error(path, "write failed", errno);
  int fd = tmp.fd;
  tmp.fd = -1;
  if (::close(fd) != 0) output_error(path, "write failed", errno);
  if (::rename(tmp.path.c_str(), target.c_str()) != 0) output_error(path, "cannot replace " + target.string(), errno);
  tmp.keep = true;
}

}  // namespace gtsim
