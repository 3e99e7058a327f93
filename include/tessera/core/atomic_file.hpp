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

/// write_file_atomically for a file whose whole content is `text` (JSON, tables, manifests).
void write_text_atomically(const std::string& path, const std::string& text);

/// Throws IoError naming `path` unless its directory exists and is writable, so a run can
/// refuse a bad output path before it does the work, not when it first writes.
void require_writable_location(const std::string& path, const std::string& what);

/// fwrite that throws IoError naming `path` on a short write (e.g. a full disk).
void write_all(std::FILE* f, const void* data, size_t bytes, const std::string& path);

}  // namespace tessera
