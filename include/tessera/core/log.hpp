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

/// Says that stdout holds a line redrawn in place (a progress bar) that has no newline yet:
/// the next message ends it first, so a message from deep in a step (a layer's choice, a
/// warning) gets a line of its own instead of landing inside the bar.
void set_open_line(bool open);
/// Ends such a line now (a newline on stdout), if one is open.
void end_open_line();

}  // namespace tessera::log
