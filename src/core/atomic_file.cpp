#include "tessera/core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tessera/core/error.hpp"
#include "tessera/core/temp_file_registry.hpp"

namespace tessera {
namespace {
std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
std::string errno_text() { return std::strerror(errno); }
}  // namespace

void require_writable_location(const std::string& path, const std::string& what) {
  if (path.empty()) throw IoError(what + ": an empty path");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw IoError(path + ": cannot write " + what + ": it is a directory");
    if (!S_ISREG(st.st_mode)) throw IoError(path + ": cannot write " + what + ": it is not a regular file");
  }
  const std::string dir = directory_of(path);
  if (::access(dir.c_str(), W_OK) != 0)
    throw IoError(path + ": cannot write " + what + ": directory '" + dir + "' does not exist or is not writable");
}

void require_writable_folder(const std::string& path, const std::string& what) {
  if (path.empty()) throw IoError(what + ": an empty path");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw IoError(path + ": cannot write " + what + ": it is not a directory");
    if (::access(path.c_str(), W_OK) != 0) throw IoError(path + ": cannot write " + what + ": not writable");
    return;
  }
  // Folders are created with their parents: the nearest one that exists must be writable.
  std::string ancestor = path;
  do {
    while (ancestor.size() > 1 && ancestor.back() == '/') ancestor.pop_back();
    ancestor = directory_of(ancestor);
  } while (::stat(ancestor.c_str(), &st) != 0 && ancestor != "." && ancestor != "/");
  if (!S_ISDIR(st.st_mode) || ::access(ancestor.c_str(), W_OK) != 0)
    throw IoError(path + ": cannot create " + what + ": '" + ancestor + "' is not a writable directory");
}

void write_all(std::FILE* f, const void* data, size_t bytes, const std::string& path) {
  if (bytes && std::fwrite(data, 1, bytes, f) != bytes) throw IoError(path + ": write failed: " + errno_text());
}

void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const TempFileRegistration registration(tmp);  // removed by a process ended at once
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw IoError(path + ": cannot create the temporary file " + tmp + ": " + errno_text());
  try {
    write(f);
    if (std::fflush(f) != 0) throw IoError(path + ": flush failed: " + errno_text());
    if (::fsync(::fileno(f)) != 0) throw IoError(path + ": fsync failed: " + errno_text());
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::fclose(f) != 0) {
    std::remove(tmp.c_str());
    throw IoError(path + ": close failed: " + errno_text());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    std::remove(tmp.c_str());
    throw IoError(path + ": cannot rename the temporary file into place: " + why);
  }
  const int dir = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_text_atomically(const std::string& path, const std::string& text) {
  write_file_atomically(path, [&](std::FILE* f) { write_all(f, text.data(), text.size(), path); });
}

}  // namespace tessera
