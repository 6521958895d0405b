# What keeps a build from a clean clone short on a 2-core machine, apart from the Highway target list (CMakeLists.txt).

# ccache, when it is installed and no launcher was chosen (-DCMAKE_CXX_COMPILER_LAUNCHER= with an empty value turns
# it off): a second build tree, another worktree or CI, which keeps ~/.ccache between runs, compiles only what changed.
if(NOT DEFINED CMAKE_CXX_COMPILER_LAUNCHER AND NOT DEFINED ENV{CMAKE_CXX_COMPILER_LAUNCHER})
  find_program(MINIGEN_CCACHE ccache)
  if(MINIGEN_CCACHE)
    set(CMAKE_CXX_COMPILER_LAUNCHER ${MINIGEN_CCACHE})
  endif()
endif()

# Precompiled headers for a target whose sources all read the same large third-party headers (GoogleTest, CLI11,
# nlohmann/json): they are parsed once instead of once per source. ccache caches a compile that uses a precompiled
# header only with the sloppiness pch_defines,time_macros (ccache's manual, "Precompiled headers"); ccache 4.7 takes
# it from the environment only, hence `cmake -E env` in front of the launcher.
# Not in the sanitizer build: there a unity test compile took 67 s with the precompiled header and 57 s without it.
function(minigen_precompile_headers target)
  if(MINIGEN_SANITIZE)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE ${ARGN})
  get_target_property(launcher ${target} CXX_COMPILER_LAUNCHER)
  if(launcher MATCHES "ccache")
    set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER
                          "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=pch_defines,time_macros;${launcher}")
  endif()
endfunction()

# Unity builds: CMake compiles a target's files eight to a translation unit, so the headers and templates they share
# (CLI11, nlohmann/json, GoogleTest, the engine's own) are parsed and instantiated once per eight files. Used for the
# targets with many files of glue, parsers, reports and tests (src/CMakeLists.txt names them) — not for the kernels,
# whose Highway files must each be a translation unit of their own. Eight files share one anonymous namespace: a
# helper or a constant there needs a name of its own (or a *_test_util.h).
# -DMINIGEN_UNITY_BUILD=OFF compiles file by file (a rebuild after editing one file is then quicker).
option(MINIGEN_UNITY_BUILD
       "Compile the CLI, the tests and the glue libraries as unity builds (eight files per compile)" ON)
function(minigen_unity_build target)
  if(MINIGEN_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()
