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

/// The one check of an output path, made by every command before it starts its work (not when
/// it first writes): throws IoError naming `path` and `what` (the flag or key that gave it, and
/// what is written) unless the path is not empty, its folder exists and is writable, and it is
/// not a folder or anything but a regular file (a write renames a new file over it).
void require_writable_location(const std::string& path, const std::string& what);

/// The same for a folder a command creates or fills (`datagen --output`, `search --output`):
/// it is a writable folder, or it does not exist and its nearest existing ancestor is a
/// writable folder.
void require_writable_folder(const std::string& path, const std::string& what);

/// fwrite that throws IoError naming `path` on a short write (e.g. a full disk).
void write_all(std::FILE* f, const void* data, size_t bytes, const std::string& path);

}  // namespace tessera
