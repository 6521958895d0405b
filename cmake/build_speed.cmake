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
function(minigen_precompile_headers target)
  target_precompile_headers(${target} PRIVATE ${ARGN})
  get_target_property(launcher ${target} CXX_COMPILER_LAUNCHER)
  if(launcher MATCHES "ccache")
    set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER
                          "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=pch_defines,time_macros;${launcher}")
  endif()
endfunction()
