#pragma once
#include <string>

namespace tessera::log {

/// Messages from rank 0 only (the rank is set once at start-up by the launcher).
void set_rank(int rank);
int rank();
void info(const std::string& message);
void warn(const std::string& message);
/// Printed by every rank, prefixed with the rank.
void error(const std::string& message);

}  // namespace tessera::log
