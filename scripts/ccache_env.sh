# Sourced by the scripts that build (build.sh, sanitize.sh, fuzz.sh, perf/common.sh): one ccache
# for every build of this checkout, outside the repository so that a fresh clone reuses it, with
# paths made relative to the checkout so that two clones share hits. pch_defines and time_macros
# let ccache cache sources compiled with the precompiled headers (CMakeLists.txt,
# TESSERA_PRECOMPILE_HEADERS); without them it compiles every such source afresh.
export CCACHE_DIR=${CCACHE_DIR:-/opt/tessera-deps/ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}
