// The source the test suite's precompiled header is made for (tests/CMakeLists.txt): CMake makes
// a target's PCH only when one of its sources uses it, and test_main.cpp cannot (it configures
// Catch2 before including it). Every test program reuses the PCH of this target.
