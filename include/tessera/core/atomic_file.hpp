#pragma once
#include <cstdio>
#include <functional>
#include <string>

namespace tessera {

/// Writes `path` so that it is either the old file or the complete new one, never a torn
/// mix: `write` fills a temporary file in the same directory, which is flushed, fsync'ed and
/// renamed over `path`, and the directory is fsync'ed so the rename survives a crash. On any
/// error the temporary file is removed, `path` is untouched, and IoError names the file.
void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write);

/// fwrite that throws IoError naming `path` on a short write (e.g. a full disk).
void write_all(std::FILE* f, const void* data, size_t bytes, const std::string& path);

}  // namespace tessera
